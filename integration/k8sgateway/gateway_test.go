//go:build k8s

package k8sgateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/poll"
	ipamctl "github.com/tlbproject/tlb/ipam/controller"
	"github.com/tlbproject/tlb/l7/gatewayctl"
)

// TestGatewayVIPs: with the real API server, the IPAM controller and the
// Gateway controller, a Gateway of our class gets a VIP from its class's
// pool in status.addresses (through its VIP Service); a requested
// spec.addresses IP is honoured when free, a Hostname address is
// refused (UnsupportedAddress, no VIP Service); a class whose gateway group
// belongs to another environment is refused (an Event on the VIP Service,
// no VIP, Programmed False); deleting a Gateway deletes its VIP Service
// and the VIP goes to the next Gateway waiting for it; and once all has
// converged, a sync writes no status.
func TestGatewayVIPs(t *testing.T) {
	ctx := context.Background()
	c := clients(t)
	ns := "gw1"
	ensureNamespace(t, c.kube, ns)
	createL4(t, c.dyn, "gw1-prod", "gw1prod", "edge", map[string]string{"gw1-one": "203.0.113.64/32", "gw1-more": "203.0.113.72/29"})
	createL4(t, c.dyn, "gw1-dev", "gw1dev", "lab", map[string]string{"gw1-dev": "198.51.100.64/29"})
	createClass(t, c, "gw1-one", tlbv1alpha1.GatewayClassConfigSpec{Environment: "gw1prod", Pool: "gw1-one", GatewayGroup: "edge"})
	createClass(t, c, "gw1-any", tlbv1alpha1.GatewayClassConfigSpec{Environment: "gw1prod", GatewayGroup: "edge"})
	createClass(t, c, "gw1-wrong", tlbv1alpha1.GatewayClassConfigSpec{Environment: "gw1prod", GatewayGroup: "lab"})
	reg := prometheus.NewRegistry()
	ctrl := startControllers(t, c, reg)
	gws := c.gw.GatewayV1().Gateways(ns)
	svcs := c.kube.CoreV1().Services(ns)

	for _, gw := range []*gatewayv1.Gateway{
		gateway(ns, "first", "gw1-one"),
		gateway(ns, "asks", "gw1-any", "203.0.113.77"),
		gateway(ns, "wrong", "gw1-wrong"),
	} {
		if _, err := gws.Create(ctx, gw, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Gateway %s: %v", gw.Name, err)
		}
	}
	waitAddress(t, c, ns, "first", "203.0.113.64")
	waitAddress(t, c, ns, "asks", "203.0.113.77")

	vip, err := svcs.Get(ctx, gatewayctl.VIPServiceName("first"), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("VIP Service of first: %v", err)
	}
	if vip.Labels[api.LabelOwningGateway] != "gw1.first" || vip.Annotations[api.AnnotationGatewayGroup] != "edge" ||
		vip.Annotations[api.AnnotationPool] != "gw1-one" || *vip.Spec.LoadBalancerClass != api.LoadBalancerClass ||
		vip.Annotations[api.AnnotationAssignedL4Cluster] != "gw1-prod" || len(vip.Spec.Selector) != 0 ||
		len(vip.Spec.Ports) != 1 || vip.Spec.Ports[0].Port != 80 {
		t.Fatalf("VIP Service of first: labels %v annotations %v spec %+v", vip.Labels, vip.Annotations, vip.Spec)
	}

	// The class's group "lab" is served only in environment gw1dev.
	poll.Explained(t, 60*time.Second, "wrong's VIP Service refused with GatewayGroupNotServed", func() (bool, string) {
		evs, err := c.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == gatewayctl.VIPServiceName("wrong") && e.Reason == ipamctl.ReasonGatewayGroupNotServed {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events, none GatewayGroupNotServed on %s", len(evs.Items), gatewayctl.VIPServiceName("wrong"))
	})
	waitNotProgrammed(t, c, ns, "wrong")

	// A Hostname address is not TLB's to serve: Accepted False
	// UnsupportedAddress, and no VIP Service.
	host := gateway(ns, "host", "gw1-any")
	hostname := gatewayv1.HostnameAddressType
	host.Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Type: &hostname, Value: "lb.example.com"}}
	if _, err := gws.Create(ctx, host, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Explained(t, 60*time.Second, "Gateway gw1/host Accepted False UnsupportedAddress", func() (bool, string) {
		gw, err := gws.Get(ctx, "host", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		a := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted))
		return a != nil && a.Status == metav1.ConditionFalse && a.Reason == string(gatewayv1.GatewayReasonUnsupportedAddress),
			fmt.Sprintf("status %+v", gw.Status)
	})
	if _, err := svcs.Get(ctx, gatewayctl.VIPServiceName("host"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("VIP Service of host with a Hostname address: get err = %v, want NotFound", err)
	}

	// The pool gw1-one is full: second waits, and gets first's VIP once
	// first is deleted.
	if _, err := gws.Create(ctx, gateway(ns, "second", "gw1-one"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNotProgrammed(t, c, ns, "second")
	if err := gws.Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Explained(t, 60*time.Second, "first's VIP Service deleted", func() (bool, string) {
		_, err := svcs.Get(ctx, gatewayctl.VIPServiceName("first"), metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	waitAddress(t, c, ns, "second", "203.0.113.64")
	waitNotProgrammed(t, c, ns, "wrong")

	// Converged: a sync (forced by a Namespace change, which the
	// controller watches) writes no status.
	writes := ctrl.StatusWrites()
	syncs := counter(t, reg, "tlb_gateway_syncs_total")
	nsObj, err := c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["touched"] = "yes"
	if _, err := c.kube.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "a sync after the Namespace change", func() bool { return counter(t, reg, "tlb_gateway_syncs_total") > syncs })
	if got := ctrl.StatusWrites(); got != writes {
		t.Fatalf("status writes went from %d to %d on a sync with nothing changed", writes, got)
	}
	if writes == 0 {
		t.Fatalf("no status was ever written")
	}
}

// waitAddress waits until Gateway ns/name has exactly addr in
// status.addresses and no longer says it waits for one.
func waitAddress(t *testing.T, c testClients, ns, name, addr string) {
	t.Helper()
	poll.Explained(t, 60*time.Second, fmt.Sprintf("Gateway %s/%s has address %s", ns, name, addr), func() (bool, string) {
		gw, err := c.gw.GatewayV1().Gateways(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		a := gw.Status.Addresses
		p := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		waiting := p != nil && p.Reason == string(gatewayv1.GatewayReasonAddressNotAssigned)
		return len(a) == 1 && a[0].Value == addr && a[0].Type != nil && *a[0].Type == gatewayv1.IPAddressType && !waiting,
			fmt.Sprintf("status %+v", gw.Status)
	})
}

// waitNotProgrammed waits until Gateway ns/name has no address and
// Programmed False with reason AddressNotAssigned.
func waitNotProgrammed(t *testing.T, c testClients, ns, name string) {
	t.Helper()
	poll.Explained(t, 60*time.Second, fmt.Sprintf("Gateway %s/%s not Programmed, no address", ns, name), func() (bool, string) {
		gw, err := c.gw.GatewayV1().Gateways(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		p := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		return p != nil && p.Status == metav1.ConditionFalse && p.Reason == string(gatewayv1.GatewayReasonAddressNotAssigned) &&
			len(gw.Status.Addresses) == 0, fmt.Sprintf("status %+v", gw.Status)
	})
}

// counter sums the samples of a counter family of reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
