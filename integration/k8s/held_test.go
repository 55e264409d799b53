//go:build k8s

package k8s

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/ipam/controller"
)

// TestInvalidPoolNeverDuplicatesOrMovesVIPs: ipam never hands out an
// address that any Service's status holds, and never moves a VIP because
// a pool is invalid. The controller starts while VIPPool t6-bad names an
// L4Cluster that does not exist (so the whole configuration is refused),
// with Services holding VIPs of the valid pool t6-good, of t6-bad, and a
// Service of another load balancer holding an address of t6-good. A new
// Service created meanwhile is refused, the holder of a t6-bad VIP is told
// (VIPPoolNotLoaded) that it keeps it, and nothing is written. Once the
// missing L4Cluster exists, that Service and two more get addresses of
// t6-good: all distinct from every held one, and no held VIP moved.
func TestInvalidPoolNeverDuplicatesOrMovesVIPs(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	ns := "t6"
	ensureNamespace(t, kc, ns)
	createPool(t, dc, "t6-a", "t6", 0, "t6-good", "198.18.60.0/29")
	createObject(t, dc, v1alpha1.VIPPoolResource, &v1alpha1.VIPPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: "t6-bad"},
		Spec:       v1alpha1.VIPPoolSpec{CIDRs: []string{"198.18.61.0/29"}, L4Cluster: "t6-missing"},
	})
	// Leave a valid configuration to the tests that follow.
	t.Cleanup(func() {
		for _, d := range []struct{ res, name string }{{"vippools", "t6-bad"}, {"vippools", "t6-good"}, {"l4clusters", "t6-missing"}, {"l4clusters", "t6-a"}} {
			_ = dc.Resource(v1alpha1.SchemeGroupVersion.WithResource(d.res)).Delete(context.Background(), d.name, metav1.DeleteOptions{})
		}
	})
	held := map[string]netip.Addr{
		"old-good": netip.MustParseAddr("198.18.60.0"),
		"old-bad":  netip.MustParseAddr("198.18.61.1"),
		"foreign":  netip.MustParseAddr("198.18.60.1"),
	}
	// As a previous leader left them: VIP in status, assignment annotations.
	createHolding(t, kc, lbService(ns, "old-good", map[string]string{api.AnnotationEnvironment: "t6",
		api.AnnotationAssignedPool: "t6-good", api.AnnotationAssignedL4Cluster: "t6-a"}), held["old-good"])
	createHolding(t, kc, lbService(ns, "old-bad", map[string]string{api.AnnotationPool: "t6-bad",
		api.AnnotationAssignedPool: "t6-bad", api.AnnotationAssignedL4Cluster: "t6-missing"}), held["old-bad"])
	foreign := lbService(ns, "foreign", nil)
	other := "example.com/other"
	foreign.Spec.LoadBalancerClass = &other
	createHolding(t, kc, foreign, held["foreign"])

	startController(t, kc, dc, "")
	deleteServicesAtCleanup(t, kc, ns)
	svcs := kc.CoreV1().Services(ns)
	create := func(name string) {
		t.Helper()
		if _, err := svcs.Create(ctx, lbService(ns, name, map[string]string{api.AnnotationEnvironment: "t6"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("new-1")
	eventually(t, 30*time.Second, "new-1 refused while the pools are invalid", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "new-1")
		return hasEvent(evs, controller.ReasonNoPool, ""), fmt.Sprintf("events %v", evs)
	})
	eventually(t, 30*time.Second, "old-bad told why its VIP is kept", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "old-bad")
		return hasEvent(evs, controller.ReasonPoolNotLoaded, held["old-bad"].String()), fmt.Sprintf("events %v", evs)
	})
	assertVIPs(t, kc, ns, held, "while the pools are invalid")

	createObject(t, dc, v1alpha1.L4ClusterResource, &v1alpha1.L4Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "t6-missing"},
		Spec:       v1alpha1.L4ClusterSpec{Environment: "t6-other"},
	})
	// The controller has loaded the fixed pools once it counts t6-bad.
	eventually(t, 30*time.Second, "the fixed configuration is loaded", func() (bool, string) {
		st := poolStatus(t, dc, "t6-bad")
		return st.Free > 0, fmt.Sprintf("t6-bad status %+v", st)
	})
	create("new-2")
	create("new-3")
	want := maps.Clone(held)
	eventually(t, 60*time.Second, "new-1, new-2 and new-3 allocated", func() (bool, string) {
		got := vipsIn(t, kc, ns)
		for _, n := range []string{"new-1", "new-2", "new-3"} {
			if _, ok := got[n]; !ok {
				return false, fmt.Sprintf("%s has no VIP; VIPs %v", n, got)
			}
		}
		return true, ""
	})
	got := vipsIn(t, kc, ns)
	for _, n := range []string{"new-1", "new-2", "new-3"} {
		if !netip.MustParsePrefix("198.18.60.0/29").Contains(got[n]) {
			t.Errorf("%s got %s, not from t6-good", n, got[n])
		}
		want[n] = got[n]
	}
	assertVIPs(t, kc, ns, want, "after the pools were fixed")
}

// createHolding creates svc and writes vip to its status, as the admin.
func createHolding(t *testing.T, kc kubernetes.Interface, svc *corev1.Service, vip netip.Addr) {
	t.Helper()
	ctx := context.Background()
	out, err := kc.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Service %s/%s: %v", svc.Namespace, svc.Name, err)
	}
	out.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip.String()}}
	if _, err := kc.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write the VIP of Service %s/%s: %v", svc.Namespace, svc.Name, err)
	}
}

// vipsIn returns the VIP of each Service of ns that has one, failing the
// test at once if two Services hold the same address.
func vipsIn(t *testing.T, kc kubernetes.Interface, ns string) map[string]netip.Addr {
	t.Helper()
	l, err := kc.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list Services of %s: %v", ns, err)
	}
	out, owner := map[string]netip.Addr{}, map[netip.Addr]string{}
	for _, s := range l.Items {
		for _, in := range s.Status.LoadBalancer.Ingress {
			a, err := netip.ParseAddr(in.IP)
			if err != nil {
				continue
			}
			if prev, dup := owner[a]; dup {
				t.Fatalf("VIP %s is in the status of both Service %s/%s and %s/%s", a, ns, prev, ns, s.Name)
			}
			owner[a], out[s.Name] = s.Name, a
		}
	}
	return out
}

// assertVIPs checks that the Services of ns hold exactly want.
func assertVIPs(t *testing.T, kc kubernetes.Interface, ns string, want map[string]netip.Addr, when string) {
	t.Helper()
	got := vipsIn(t, kc, ns)
	for name, a := range want {
		if got[name] != a {
			t.Errorf("%s: Service %s/%s holds %v in status, want %s (moved)", when, ns, name, got[name], a)
		}
	}
	for name, a := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: Service %s/%s got %s, want no VIP yet", when, ns, name, a)
		}
	}
}
