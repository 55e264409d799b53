package gatewayapi

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestRebuildMergesToTheSameStatus: a second Build an hour later, merged
// over the first's status, gives exactly the first status (so the
// controller writes nothing), and a changed condition gets the new time.
func TestRebuildMergesToTheSameStatus(t *testing.T) {
	in := policyWorld(t)
	first := Build(in).Status
	in.Now = testNow.Add(time.Hour)
	second := Build(in).Status

	gc := MergeGatewayClassStatus(first.GatewayClasses["tlb"], second.GatewayClasses["tlb"])
	gw := MergeGatewayStatus(first.Gateways[gwKey], second.Gateways[gwKey])
	hr := MergeRouteStatus(first.HTTPRoutes[routeKeyR].RouteStatus, second.HTTPRoutes[routeKeyR].RouteStatus)
	pol := MergePolicyStatus(first.TrafficPolicies[nn("infra", "edge")], second.TrafficPolicies[nn("infra", "edge")])
	for name, pair := range map[string][2]any{
		"class":   {first.GatewayClasses["tlb"], gc},
		"gateway": {first.Gateways[gwKey], gw},
		"route":   {first.HTTPRoutes[routeKeyR].RouteStatus, hr},
		"policy":  {first.TrafficPolicies[nn("infra", "edge")], pol},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s: merged status differs from the first:\n%s\n%s", name, jsonOf(pair[0]), jsonOf(pair[1]))
		}
	}

	in.Addresses = nil
	third := MergeGatewayStatus(first.Gateways[gwKey], Build(in).Status.Gateways[gwKey])
	if c := cond(t, third.Conditions, "Programmed"); !c.LastTransitionTime.Time.Equal(in.Now) {
		t.Fatalf("Programmed changed at %v; want the new time %v", c.LastTransitionTime, in.Now)
	}
	if c := cond(t, third.Conditions, "Accepted"); !c.LastTransitionTime.Time.Equal(testNow) {
		t.Fatalf("Accepted kept at %v; want the first time %v", c.LastTransitionTime, testNow)
	}
}

func TestMergeRouteStatusKeepsOtherControllers(t *testing.T) {
	other := gatewayv1.RouteParentStatus{ParentRef: parentRef("infra", "theirs", ""), ControllerName: "example.com/other",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}}
	stale := gatewayv1.RouteParentStatus{ParentRef: parentRef("infra", "gone", ""), ControllerName: ControllerName}
	ours := gatewayv1.RouteParentStatus{ParentRef: parentRef("infra", "gw", ""), ControllerName: ControllerName}
	got := MergeRouteStatus(gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{other, stale}}, gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{ours}})
	want := []gatewayv1.RouteParentStatus{other, ours}
	if !reflect.DeepEqual(got.Parents, want) {
		t.Fatalf("parents %s; want the other controller's kept, our stale one dropped, ours added", jsonOf(got.Parents))
	}
	pol := MergePolicyStatus(gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{{ControllerName: "example.com/other"}}},
		gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{{ControllerName: ControllerName}}})
	if len(pol.Ancestors) != 2 || pol.Ancestors[0].ControllerName != "example.com/other" {
		t.Fatalf("ancestors %s; want the other controller's kept", jsonOf(pol.Ancestors))
	}
}
