//go:build k8s

package k8sgateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/poll"
	ipamctl "github.com/tlbproject/tlb/ipam/controller"
)

// TestGatewaySeveralAddresses: with the real API server and IPAM, a
// Gateway asking for three addresses (one of its pool, one the IPAM
// chooses, one outside every pool) gets a VIP Service for each, has the
// two it can have in status.addresses, and is Programmed False
// AddressNotUsable naming the third and the IPAM's reason; without it, it
// is Programmed. A second Gateway asking for an address the first holds
// is refused (VIPInUse, on its Programmed) and gets the address once the
// first lets it go.
func TestGatewaySeveralAddresses(t *testing.T) {
	ctx := context.Background()
	c := clients(t)
	ns := "gw2"
	ensureNamespace(t, c.kube, ns)
	createL4(t, c.dyn, "gw2-prod", "gw2prod", "edge", map[string]string{"gw2-pool": "192.0.2.16/29"})
	createClass(t, c, "gw2", tlbv1alpha1.GatewayClassConfigSpec{Environment: "gw2prod", Pool: "gw2-pool", GatewayGroup: "edge"})
	startControllers(t, c, prometheus.NewRegistry())
	gws := c.gw.GatewayV1().Gateways(ns)

	multi := gateway(ns, "multi", "gw2", "192.0.2.20", "", "198.18.0.1")
	if _, err := gws.Create(ctx, multi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitProgrammed(t, c, ns, "multi", metav1.ConditionFalse, gatewayv1.GatewayReasonAddressNotUsable,
		[]string{"spec.addresses[2] 198.18.0.1", ipamctl.ReasonNoPool}, 2)
	gw, err := gws.Get(ctx, "multi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := gw.Status.Addresses; a[0].Value != "192.0.2.20" || a[1].Value == "198.18.0.1" {
		t.Fatalf("status.addresses %+v; want 192.0.2.20 and one the IPAM chose", a)
	}
	chosen := gw.Status.Addresses[1].Value
	svcs, err := c.kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svcs.Items) != 3 {
		t.Fatalf("%d Services; want one VIP Service per requested address", len(svcs.Items))
	}

	// The address outside every pool dropped: all served, Programmed.
	gw.Spec.Addresses = gw.Spec.Addresses[:2]
	if _, err := gws.Update(ctx, gw, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitProgrammed(t, c, ns, "multi", metav1.ConditionTrue, gatewayv1.GatewayReasonProgrammed, nil, 2)

	// Another Gateway asks for the address multi chose: refused as in
	// use, with the IPAM's reason on its Programmed condition, until
	// multi is deleted.
	if _, err := gws.Create(ctx, gateway(ns, "later", "gw2", chosen), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitProgrammed(t, c, ns, "later", metav1.ConditionFalse, gatewayv1.GatewayReasonAddressNotUsable,
		[]string{"spec.addresses[0] " + chosen, ipamctl.ReasonInUse}, 0)
	if err := gws.Delete(ctx, "multi", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitProgrammed(t, c, ns, "later", metav1.ConditionTrue, gatewayv1.GatewayReasonProgrammed, nil, 1)
}

// waitProgrammed waits until Gateway ns/name's Programmed condition has
// status and reason and a message containing each of parts, and it has
// addresses addresses.
func waitProgrammed(t *testing.T, c testClients, ns, name string, status metav1.ConditionStatus, reason gatewayv1.GatewayConditionReason, parts []string, addresses int) {
	t.Helper()
	poll.Explained(t, 60*time.Second, fmt.Sprintf("Gateway %s/%s Programmed %s %s %v with %d addresses", ns, name, status, reason, parts, addresses), func() (bool, string) {
		gw, err := c.gw.GatewayV1().Gateways(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		p := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		ok := p != nil && p.Status == status && p.Reason == string(reason) && p.ObservedGeneration == gw.Generation &&
			!slices.ContainsFunc(parts, func(s string) bool { return !strings.Contains(p.Message, s) }) && len(gw.Status.Addresses) == addresses
		return ok, fmt.Sprintf("status %+v", gw.Status)
	})
}
