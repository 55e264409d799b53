package gatewayctl

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// TestPlanListenerSets: a set Build gave a status gets it written, with
// the transition times of unchanged conditions kept; a set Build said
// nothing of (another controller's Gateway) is left alone; once written,
// nothing is planned again.
func TestPlanListenerSets(t *testing.T) {
	then, now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	ours := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "ours"}}
	ours.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: then}}
	theirs := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "theirs"}}
	in := gatewayapi.Inputs{ListenerSets: []*gatewayv1.ListenerSet{ours, theirs}}
	want := gatewayapi.Status{ListenerSets: map[types.NamespacedName]gatewayv1.ListenerSetStatus{
		{Namespace: "a", Name: "ours"}: {
			Conditions: []metav1.Condition{
				{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: now},
				{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", LastTransitionTime: now},
			},
			Listeners: []gatewayv1.ListenerEntryStatus{{Name: "l", AttachedRoutes: 2}},
		},
	}}
	none := func(string, metav1.Object) bool { return false }
	w := planListenerSets(in, want, none)
	if len(w) != 1 || w[0].Name != "ours" {
		t.Fatalf("writes %v; want a/ours alone", w)
	}
	st := w[0].Status
	if len(st.Conditions) != 2 || !st.Conditions[0].LastTransitionTime.Equal(&then) || !st.Conditions[1].LastTransitionTime.Equal(&now) {
		t.Errorf("conditions %+v; want Accepted's transition kept, Programmed's new", st.Conditions)
	}
	if len(st.Listeners) != 1 || st.Listeners[0].AttachedRoutes != 2 {
		t.Errorf("listeners %+v; want l with 2 routes", st.Listeners)
	}
	in.ListenerSets[0] = w[0]
	if again := planListenerSets(in, want, none); len(again) != 0 {
		t.Errorf("unchanged status planned again: %v", again)
	}
	if w := planListenerSets(gatewayapi.Inputs{ListenerSets: []*gatewayv1.ListenerSet{ours}}, want, func(string, metav1.Object) bool { return true }); len(w) != 0 {
		t.Errorf("a set with a write in flight planned again")
	}
}

// TestSetPortsOnTheVIPService: a set's listener ports join the VIP
// Service of the Gateway that admits it, once each; a Gateway that
// admits no sets, or not the set's namespace, keeps its own ports.
func TestSetPortsOnTheVIPService(t *testing.T) {
	same, none := gateway("a", "web", "tlb"), gateway("a", "closed", "tlb")
	for _, g := range []*gatewayv1.Gateway{same, none} {
		g.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}
	}
	from := gatewayv1.NamespacesFromSame
	same.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: &from}}
	set := func(ns, name, gw string, ls ...gatewayv1.ListenerEntry) *gatewayv1.ListenerSet {
		return &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: gatewayv1.ObjectName(gw), Namespace: ptrTo(gatewayv1.Namespace("a"))}, Listeners: ls}}
	}
	entry := func(port int32, p gatewayv1.ProtocolType) gatewayv1.ListenerEntry {
		return gatewayv1.ListenerEntry{Name: "l", Port: port, Protocol: p}
	}
	p := planVIPs([]*gatewayv1.GatewayClass{class("tlb", gatewayapi.ControllerName, "prod")}, testConfigs, []*gatewayv1.Gateway{same, none})
	addSetPorts(p, []*gatewayv1.ListenerSet{
		set("a", "s1", "web", entry(80, gatewayv1.HTTPProtocolType), entry(8443, gatewayv1.HTTPSProtocolType), entry(53, gatewayv1.UDPProtocolType)),
		set("b", "other-namespace", "web", entry(9000, gatewayv1.HTTPProtocolType)),
		set("a", "s2", "closed", entry(9001, gatewayv1.HTTPProtocolType)),
	})
	ports := func(gw string) []string {
		var out []string
		for _, sp := range p.services[types.NamespacedName{Namespace: "a", Name: gw}][0].Spec.Ports {
			out = append(out, sp.Name)
		}
		return out
	}
	if got, want := ports("web"), []string{"udp-53", "tcp-80", "tcp-8443"}; !slices.Equal(got, want) {
		t.Errorf("web ports = %v; want %v", got, want)
	}
	if got, want := ports("closed"), []string{"tcp-80"}; !slices.Equal(got, want) {
		t.Errorf("closed ports = %v; want %v", got, want)
	}
}

func ptrTo[T any](v T) *T { return &v }
