package gatewayctl

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// TestVIPServiceNamesFleet: a Gateway annotated tlb.io/fleet=dedicated
// gets its fleet's group on its VIP Service (the VIP's own gateway group
// unchanged: the class's gateway nodes bind it); dropping the annotation
// makes updateVIP remove it, and an unchanged one asks no update.
func TestVIPServiceNamesFleet(t *testing.T) {
	classes := []*gatewayv1.GatewayClass{class("tlb", gatewayapi.ControllerName, "prod")}
	own := gateway("a", "own", "tlb")
	own.Annotations = map[string]string{api.AnnotationFleet: api.FleetDedicated}
	shared := gateway("a", "web", "tlb")
	plan := planVIPs(classes, testConfigs, []*gatewayv1.Gateway{own, shared})

	ownSvc := plan.services[types.NamespacedName{Namespace: "a", Name: "own"}][0]
	if got := ownSvc.Annotations[api.AnnotationFleetGroup]; got != "edge.a.own" {
		t.Errorf("VIP Service of a/own: %s = %q, want edge.a.own", api.AnnotationFleetGroup, got)
	}
	if got := ownSvc.Annotations[api.AnnotationGatewayGroup]; got != "edge" {
		t.Errorf("VIP Service of a/own: %s = %q, want the class's group edge", api.AnnotationGatewayGroup, got)
	}
	if _, ok := plan.services[types.NamespacedName{Namespace: "a", Name: "web"}][0].Annotations[api.AnnotationFleetGroup]; ok {
		t.Errorf("VIP Service of shared a/web has %s", api.AnnotationFleetGroup)
	}
	if w := updateVIP(ownSvc, ownSvc); w != nil {
		t.Errorf("unchanged VIP Service updated: %v", w.Annotations)
	}

	own.Annotations = nil
	back := planVIPs(classes, testConfigs, []*gatewayv1.Gateway{own}).services[types.NamespacedName{Namespace: "a", Name: "own"}][0]
	w := updateVIP(ownSvc, back)
	if w == nil {
		t.Fatal("dropping the fleet annotation asks no update of the VIP Service")
	}
	if _, ok := w.Annotations[api.AnnotationFleetGroup]; ok || w.Annotations[api.AnnotationGatewayGroup] != "edge" {
		t.Errorf("after the Gateway went back to the shared fleet: annotations %v", w.Annotations)
	}
}
