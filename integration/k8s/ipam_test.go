//go:build k8s

package k8s

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/ipam/controller"
)

// TestServiceGetsVIPFromRightPool: proof 1. A Service of class tlb.io/l4
// gets a VIP from the pool of its environment, recorded in status and
// annotations (one write to services/status: the real API server keeps
// the annotations), with no finalizer; deleting it frees the VIP; an
// invalid annotation produces an Event and no allocation; an exhausted pool produces an Event, and the
// Service gets the address as soon as one is freed; a Service of another
// class is not touched, and the address in its status is not handed out.
func TestServiceGetsVIPFromRightPool(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	ns := "t1"
	ensureNamespace(t, kc, ns)
	createPool(t, dc, "t1-prod", "t1prod", 0, "t1-prod-pool", "203.0.113.0/28")
	createPool(t, dc, "t1-dev", "t1dev", 0, "t1-dev-pool", "198.51.100.16/28")
	createPool(t, dc, "t1-tiny", "t1tiny", 0, "t1-tiny-pool", "198.51.100.200/32")
	startController(t, kc, dc, "")
	deleteServicesAtCleanup(t, kc, ns)
	svcs := kc.CoreV1().Services(ns)

	if _, err := svcs.Create(ctx, lbService(ns, "web", map[string]string{api.AnnotationEnvironment: "t1dev"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var vip netip.Addr
	eventually(t, 60*time.Second, "web gets a VIP from t1-dev-pool", func() (bool, string) {
		s, err := svcs.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		a, ok := vipOf(s)
		if !ok {
			return false, "no ingress IP in status"
		}
		vip = a
		return true, ""
	})
	web, _ := svcs.Get(ctx, "web", metav1.GetOptions{})
	if !netip.MustParsePrefix("198.51.100.16/28").Contains(vip) {
		t.Fatalf("VIP %s is not from t1-dev-pool (198.51.100.16/28)", vip)
	}
	if web.Annotations[api.AnnotationAssignedPool] != "t1-dev-pool" || web.Annotations[api.AnnotationAssignedL4Cluster] != "t1-dev" {
		t.Fatalf("assignment annotations = %v", web.Annotations)
	}
	if len(web.Finalizers) != 0 {
		t.Fatalf("finalizers = %v, want none (allocations are rebuilt from status)", web.Finalizers)
	}
	eventually(t, 30*time.Second, "t1-dev-pool status counts the VIP", func() (bool, string) {
		st := poolStatus(t, dc, "t1-dev-pool")
		return st.Used == 1 && st.Free == 15, fmt.Sprintf("status %+v", st)
	})
	eventually(t, 30*time.Second, "VIPAllocated event", func() (bool, string) {
		return hasEvent(eventsFor(t, kc, ns, "web"), controller.ReasonAllocated, vip.String()), "no event"
	})

	// An invalid annotation: an Event that says what to fix, no VIP.
	if _, err := svcs.Create(ctx, lbService(ns, "bad", map[string]string{api.AnnotationVIP: "not-an-ip"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "InvalidAnnotation event on bad", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "bad")
		return hasEvent(evs, controller.ReasonInvalidAnnotation, `annotation tlb.io/vip: "not-an-ip"`), fmt.Sprintf("events %v", evs)
	})
	bad, _ := svcs.Get(ctx, "bad", metav1.GetOptions{})
	if _, ok := vipOf(bad); ok || len(bad.Finalizers) != 0 || bad.Annotations[api.AnnotationAssignedPool] != "" {
		t.Fatalf("invalid Service was allocated: status %+v finalizers %v annotations %v", bad.Status, bad.Finalizers, bad.Annotations)
	}

	// Delete web: the finalizer goes, the Service goes, the VIP is free.
	if err := svcs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "web deleted", func() (bool, string) {
		_, err := svcs.Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	eventually(t, 30*time.Second, "t1-dev-pool back to 0 used", func() (bool, string) {
		st := poolStatus(t, dc, "t1-dev-pool")
		return st.Used == 0 && st.Free == 16, fmt.Sprintf("status %+v", st)
	})
	if _, err := svcs.Create(ctx, lbService(ns, "reuse", map[string]string{api.AnnotationVIP: vip.String()}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVIP(t, kc, ns, "reuse", vip)

	// Pool exhausted: an Event; freeing the address hands it over.
	for _, n := range []string{"tiny1", "tiny2"} {
		if _, err := svcs.Create(ctx, lbService(ns, n, map[string]string{api.AnnotationEnvironment: "t1tiny"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if n == "tiny1" {
			waitVIP(t, kc, ns, n, netip.MustParseAddr("198.51.100.200"))
		}
	}
	eventually(t, 30*time.Second, "PoolExhausted event on tiny2", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "tiny2")
		return hasEvent(evs, controller.ReasonExhausted, "t1tiny"), fmt.Sprintf("events %v", evs)
	})
	if err := svcs.Delete(ctx, "tiny1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVIP(t, kc, ns, "tiny2", netip.MustParseAddr("198.51.100.200"))

	// A Service of another class is never touched, but the address its
	// status holds is not handed out: the pool counts it as used once the
	// controller has seen it (a condition to wait on instead of a sleep).
	other := lbService(ns, "foreign", map[string]string{api.AnnotationEnvironment: "t1dev"})
	cls := "example.com/other"
	other.Spec.LoadBalancerClass = &cls
	foreignIP := netip.MustParseAddr("198.51.100.30")
	eventually(t, 30*time.Second, "t1-dev-pool counts the VIP of reuse", func() (bool, string) {
		st := poolStatus(t, dc, "t1-dev-pool")
		return st.Used == 1, fmt.Sprintf("status %+v", st)
	})
	createHolding(t, kc, other, foreignIP)
	eventually(t, 30*time.Second, "t1-dev-pool counts the address of the foreign Service too", func() (bool, string) {
		st := poolStatus(t, dc, "t1-dev-pool")
		return st.Used == 2, fmt.Sprintf("status %+v", st)
	})
	f, _ := svcs.Get(ctx, "foreign", metav1.GetOptions{})
	if ip, _ := vipOf(f); ip != foreignIP || len(f.Status.LoadBalancer.Ingress) != 1 || len(f.Finalizers) != 0 ||
		f.Annotations[api.AnnotationAssignedPool] != "" || len(eventsFor(t, kc, ns, "foreign")) != 0 {
		t.Fatalf("controller touched a Service of another class: %+v", f)
	}
	if _, err := svcs.Create(ctx, lbService(ns, "thief", map[string]string{api.AnnotationVIP: foreignIP.String()}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "VIPInUse Event on thief", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "thief")
		return hasEvent(evs, controller.ReasonInUse, foreignIP.String()), fmt.Sprintf("events %v", evs)
	})
}

// waitVIP waits until ns/name has want in its status.
func waitVIP(t *testing.T, kc kubernetes.Interface, ns, name string, want netip.Addr) {
	t.Helper()
	eventually(t, 60*time.Second, name+" gets "+want.String(), func() (bool, string) {
		s, err := kc.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got, _ := vipOf(s)
		return got == want, "status VIP " + got.String()
	})
}

// TestManyServicesAndRestart: proof 2. 200 Services created at once all
// get distinct VIPs; a controller restart in the middle changes none of
// the VIPs already published.
func TestManyServicesAndRestart(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	ns := "t2"
	ensureNamespace(t, kc, ns)
	pfx := netip.MustParsePrefix("198.18.17.0/24")
	createPool(t, dc, "t2-a", "t2", 0, "t2-pool", "198.18.16.0/24")
	createPool(t, dc, "t2-b", "t2", 0, "t2-pool-b", pfx.String())
	// The first controller is throttled (20 requests/s: a write and an
	// Event per Service) so that it is surely stopped half-way.
	skc, sdc := slowClients(t, 20)
	first := startController(t, skc, sdc, "t2")

	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			svc := lbService(ns, fmt.Sprintf("s%03d", i), map[string]string{api.AnnotationEnvironment: "t2"})
			if i%2 == 0 {
				// Half rely on the controller's default environment.
				svc.Annotations = nil
			}
			_, err := kc.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("create Service: %v", err)
		}
	}

	snapshot := func() map[string]netip.Addr {
		list, err := kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]netip.Addr{}
		for _, s := range list.Items {
			if a, ok := vipOf(&s); ok {
				out[s.Name] = a
			}
		}
		return out
	}
	var before map[string]netip.Addr
	eventually(t, 120*time.Second, "some Services allocated before the restart", func() (bool, string) {
		before = snapshot()
		return len(before) >= 30, fmt.Sprintf("%d allocated", len(before))
	})
	first.stop()
	before = snapshot() // what the API server holds when the controller is gone
	t.Logf("controller stopped with %d of %d Services allocated", len(before), n)
	if len(before) == n {
		t.Fatalf("all %d allocated before the restart; the restart proves nothing", n)
	}
	startController(t, kc, dc, "t2")
	deleteServicesAtCleanup(t, kc, ns)

	var after map[string]netip.Addr
	eventually(t, 180*time.Second, "all Services allocated", func() (bool, string) {
		after = snapshot()
		return len(after) == n, fmt.Sprintf("%d of %d allocated", len(after), n)
	})
	seen := map[netip.Addr]string{}
	for name, a := range after {
		if prev, dup := seen[a]; dup {
			t.Errorf("VIP %s given to both %s and %s", a, prev, name)
		}
		seen[a] = name
		if !pfx.Contains(a) && !netip.MustParsePrefix("198.18.16.0/24").Contains(a) {
			t.Errorf("%s got %s, outside the t2 pools", name, a)
		}
	}
	for name, a := range before {
		if after[name] != a {
			t.Errorf("restart changed %s: %s -> %s", name, a, after[name])
		}
	}
	// The scheduler spreads over both L4 clusters (least loaded first).
	eventually(t, 30*time.Second, "pool status counts all 200", func() (bool, string) {
		a, b := poolStatus(t, dc, "t2-pool"), poolStatus(t, dc, "t2-pool-b")
		return a.Used+b.Used == n && a.Used == n/2, fmt.Sprintf("t2-pool %+v t2-pool-b %+v", a, b)
	})
}
