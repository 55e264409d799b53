package gatewayctl

import (
	"net/netip"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// TestPlanStatusGateways: the controller's part of a Gateway's status
// (addresses from the VIP Service, UnsupportedAddress, a VIP not yet
// assigned) on top of Build's, and no write once the status is there.
func TestPlanStatusGateways(t *testing.T) {
	classes := []*gatewayv1.GatewayClass{class("tlb", gatewayapi.ControllerName, "prod")}
	web, host, wait := gateway("a", "web", "tlb"), gateway("a", "host", "tlb", addr(gatewayv1.HostnameAddressType, "lb.example.com")), gateway("a", "wait", "tlb")
	in := gatewayapi.Inputs{
		Classes: classes, ClassConfigs: testConfigs, Gateways: []*gatewayv1.Gateway{web, host, wait},
		Addresses: map[types.NamespacedName][]netip.Addr{{Namespace: "a", Name: "web"}: {netip.MustParseAddr("203.0.113.7")}},
		Now:       time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	p := planVIPs(in.Classes, in.ClassConfigs, in.Gateways)
	built := gatewayapi.Status{Gateways: map[types.NamespacedName]gatewayv1.GatewayStatus{
		{Namespace: "a", Name: "web"}: {Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 2}}},
	}}
	w := planStatus(in, p, diffVIPs(p, nil), built, nil)
	if len(w.gateways) != 3 {
		t.Fatalf("status writes for %d Gateways, want 3", len(w.gateways))
	}
	got := map[string]gatewayv1.GatewayStatus{}
	for _, g := range w.gateways {
		got[g.Name] = g.Status
	}
	if a := got["web"].Addresses; len(a) != 1 || a[0].Value != "203.0.113.7" || meta.FindStatusCondition(got["web"].Conditions, "Accepted") == nil {
		t.Errorf("web status = %+v, want Build's Accepted and address 203.0.113.7", got["web"])
	}
	if c := meta.FindStatusCondition(got["host"].Conditions, "Accepted"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "UnsupportedAddress" {
		t.Errorf("host Accepted = %+v, want False UnsupportedAddress", c)
	}
	if c := meta.FindStatusCondition(got["wait"].Conditions, "Programmed"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "AddressNotAssigned" {
		t.Errorf("wait Programmed = %+v, want False AddressNotAssigned", c)
	}

	// Written: the next plan, an hour later, writes nothing.
	copy(in.Gateways, w.gateways)
	in.Now = in.Now.Add(time.Hour)
	if again := planStatus(in, p, diffVIPs(p, nil), built, nil); !again.empty() {
		t.Errorf("unchanged status planned again: %d Gateways", len(again.gateways))
	}
}

// TestPlanStatusDropsStaleOverride: when Build says nothing, a Gateway
// that waited for its VIP (Programmed False AddressNotAssigned, set by
// the controller) loses that condition once it has the VIP, and one with
// the CRD's default Programmed Pending and no VIP says it waits.
func TestPlanStatusDropsStaleOverride(t *testing.T) {
	gw := gateway("a", "web", "tlb")
	gw.Status.Conditions = []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionUnknown, Reason: "Pending"},
		{Type: "Programmed", Status: metav1.ConditionFalse, Reason: "AddressNotAssigned"},
	}
	waiting := gateway("a", "wait", "tlb")
	waiting.Status.Conditions = []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionUnknown, Reason: "Pending"}}
	in := gatewayapi.Inputs{
		Classes: []*gatewayv1.GatewayClass{class("tlb", gatewayapi.ControllerName, "prod")}, ClassConfigs: testConfigs,
		Gateways:  []*gatewayv1.Gateway{gw, waiting},
		Addresses: map[types.NamespacedName][]netip.Addr{{Namespace: "a", Name: "web"}: {netip.MustParseAddr("203.0.113.7")}},
	}
	p := planVIPs(in.Classes, in.ClassConfigs, in.Gateways)
	w := planStatus(in, p, diffVIPs(p, nil), gatewayapi.Status{}, nil)
	if len(w.gateways) != 2 {
		t.Fatalf("%d status writes, want 2", len(w.gateways))
	}
	// The CRD's default Programmed Pending gives way to AddressNotAssigned.
	if c := meta.FindStatusCondition(w.gateways[1].Status.Conditions, "Programmed"); c == nil || c.Reason != "AddressNotAssigned" {
		t.Errorf("a/wait Programmed = %+v, want AddressNotAssigned", c)
	}
	st := w.gateways[0].Status
	if meta.FindStatusCondition(st.Conditions, "Programmed") != nil || meta.FindStatusCondition(st.Conditions, "Accepted") == nil {
		t.Errorf("conditions = %+v, want Accepted kept and the stale Programmed dropped", st.Conditions)
	}
}
