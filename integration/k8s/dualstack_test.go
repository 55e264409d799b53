//go:build k8s

package k8s

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/ipam/controller"
)

// TestDualStackServices: issue 26 item 1 on the real API server (started
// with IPv4 and IPv6 service ranges). spec.ipFamilies and
// spec.ipFamilyPolicy decide the VIPs: RequireDualStack gets one of each
// family, in the order of spec.ipFamilies, both in status with ipMode
// Proxy; an IPv6 SingleStack Service gets an IPv6 VIP; tlb.io/vip takes
// one address per family; PreferDualStack in an environment without IPv6
// pools gets an IPv4 VIP alone, and RequireDualStack there an Event
// naming spec.ipFamilyPolicy and no VIP; a controller restart keeps both
// VIPs of a dual-stack Service.
func TestDualStackServices(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	ns := "t26"
	ensureNamespace(t, kc, ns)
	createPool(t, dc, "t26-dual", "t26env", 0, "t26-mixed", "192.0.2.192/29", "2001:db8:26::/125")
	createPool(t, dc, "t26-v4", "t26v4", 0, "t26-v4-pool", "192.0.2.208/29")
	first := startController(t, kc, dc, "")
	deleteServicesAtCleanup(t, kc, ns)
	svcs := kc.CoreV1().Services(ns)
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	create := func(name string, ann map[string]string, policy corev1.IPFamilyPolicy, families ...corev1.IPFamily) {
		t.Helper()
		s := lbService(ns, name, ann)
		s.Spec.IPFamilyPolicy, s.Spec.IPFamilies = &policy, families
		if _, err := svcs.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Service %s: %v", name, err)
		}
	}
	ip := netip.MustParseAddr
	env := func(e string) map[string]string { return map[string]string{api.AnnotationEnvironment: e} }

	create("dual", env("t26env"), corev1.IPFamilyPolicyRequireDualStack, v4, v6)
	waitIngress(t, kc, ns, "dual", ip("192.0.2.192"), ip("2001:db8:26::"))
	create("dual-v6-first", env("t26env"), corev1.IPFamilyPolicyRequireDualStack, v6, v4)
	waitIngress(t, kc, ns, "dual-v6-first", ip("2001:db8:26::1"), ip("192.0.2.193"))
	create("six", env("t26env"), corev1.IPFamilyPolicySingleStack, v6)
	waitIngress(t, kc, ns, "six", ip("2001:db8:26::2"))
	create("pinned", map[string]string{api.AnnotationVIP: "192.0.2.197,2001:db8:26::5"}, corev1.IPFamilyPolicyPreferDualStack, v4, v6)
	waitIngress(t, kc, ns, "pinned", ip("192.0.2.197"), ip("2001:db8:26::5"))
	create("prefer", env("t26v4"), corev1.IPFamilyPolicyPreferDualStack, v4, v6)
	waitIngress(t, kc, ns, "prefer", ip("192.0.2.208"))

	dual, err := svcs.Get(ctx, "dual", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range dual.Status.LoadBalancer.Ingress {
		if in.IPMode == nil || *in.IPMode != corev1.LoadBalancerIPModeProxy {
			t.Fatalf("ingress %s of dual has ipMode %v, want Proxy", in.IP, in.IPMode)
		}
	}
	if dual.Annotations[api.AnnotationAssignedPool] != "t26-mixed" || dual.Annotations[api.AnnotationAssignedL4Cluster] != "t26-dual" {
		t.Fatalf("assignment annotations of dual: %v", dual.Annotations)
	}
	eventually(t, 30*time.Second, "VIPAllocated event naming both VIPs of dual", func() (bool, string) {
		return hasEvent(eventsFor(t, kc, ns, "dual"), controller.ReasonAllocated, "192.0.2.192,2001:db8:26::"), "no event"
	})

	create("must", env("t26v4"), corev1.IPFamilyPolicyRequireDualStack, v4, v6)
	eventually(t, 30*time.Second, "NoMatchingPool Event naming spec.ipFamilyPolicy on must", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "must")
		return hasEvent(evs, controller.ReasonNoPool, "spec.ipFamilyPolicy RequireDualStack"), fmt.Sprintf("events %v", evs)
	})
	create("wrong-family", map[string]string{api.AnnotationVIP: "2001:db8:26::6"}, corev1.IPFamilyPolicySingleStack, v4)
	eventually(t, 30*time.Second, "InvalidAnnotation Event on wrong-family", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "wrong-family")
		return hasEvent(evs, controller.ReasonInvalidAnnotation, "spec.ipFamilies"), fmt.Sprintf("events %v", evs)
	})
	for _, name := range []string{"must", "wrong-family"} {
		s, _ := svcs.Get(ctx, name, metav1.GetOptions{})
		if len(s.Status.LoadBalancer.Ingress) != 0 {
			t.Fatalf("%s was given %v", name, s.Status.LoadBalancer.Ingress)
		}
	}

	// A restart rebuilds both VIPs of every Service from status: nothing
	// moves, and the next Service gets the next free address of each
	// family.
	first.stop()
	startController(t, kc, dc, "")
	create("after", env("t26env"), corev1.IPFamilyPolicyRequireDualStack, v4, v6)
	waitIngress(t, kc, ns, "after", ip("192.0.2.194"), ip("2001:db8:26::3"))
	waitIngress(t, kc, ns, "dual", ip("192.0.2.192"), ip("2001:db8:26::"))
	eventually(t, 30*time.Second, "t26-mixed counts 9 VIPs (4 IPv4, 5 IPv6)", func() (bool, string) {
		st := poolStatus(t, dc, "t26-mixed")
		return st.Used == 9 && st.Free == 7, fmt.Sprintf("status %+v", st)
	})
}

// waitIngress waits until the status of ns/name holds want, in order.
func waitIngress(t *testing.T, kc kubernetes.Interface, ns, name string, want ...netip.Addr) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("%s gets %v", name, want), func() (bool, string) {
		s, err := kc.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		var got []netip.Addr
		for _, in := range s.Status.LoadBalancer.Ingress {
			a, _ := netip.ParseAddr(in.IP)
			got = append(got, a)
		}
		return slices.Equal(got, want), fmt.Sprintf("status ingress %v", got)
	})
}
