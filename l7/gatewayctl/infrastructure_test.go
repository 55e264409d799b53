package gatewayctl

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// TestInfrastructureMetadata: spec.infrastructure's labels and
// annotations go onto the VIP Service with the gateway-name label, keys of
// tlb.io excepted; a key the Gateway drops is removed, one someone else
// set is kept.
func TestInfrastructureMetadata(t *testing.T) {
	classes := []*gatewayv1.GatewayClass{class("tlb", gatewayapi.ControllerName, "prod")}
	gw := gateway("a", "web", "tlb")
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{
		Labels:      map[gatewayv1.LabelKey]gatewayv1.LabelValue{"team": "a", "drop": "me", api.LabelOwningGateway: "forged"},
		Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"example.com/cost": "7", api.AnnotationPool: "forged"},
	}
	key := types.NamespacedName{Namespace: "a", Name: "web"}
	svc := planVIPs(classes, testConfigs, []*gatewayv1.Gateway{gw}).services[key][0]
	if svc.Labels["team"] != "a" || svc.Labels[gatewayv1.GatewayNameLabelKey] != "web" || svc.Annotations["example.com/cost"] != "7" {
		t.Fatalf("VIP Service metadata: labels %v annotations %v; want team=a, the gateway-name label and example.com/cost=7", svc.Labels, svc.Annotations)
	}
	if svc.Labels[api.LabelOwningGateway] != "a.web" || svc.Annotations[api.AnnotationPool] != "public" {
		t.Fatalf("spec.infrastructure overrode the controller's keys: labels %v annotations %v", svc.Labels, svc.Annotations)
	}

	cur := svc.DeepCopy()
	cur.Labels["someone"] = "else"
	delete(gw.Spec.Infrastructure.Labels, "drop")
	gw.Spec.Infrastructure.Annotations["example.com/cost"] = "8"
	p := planVIPs(classes, testConfigs, []*gatewayv1.Gateway{gw})
	d := diffVIPs(p, nil)
	if len(d.create) != 1 {
		t.Fatalf("create %d; want the VIP Service", len(d.create))
	}
	u := updateVIP(cur, p.services[key][0])
	if u == nil {
		t.Fatal("a changed spec.infrastructure did not update the VIP Service")
	}
	if _, ok := u.Labels["drop"]; ok || u.Labels["someone"] != "else" || u.Annotations["example.com/cost"] != "8" || u.Labels["team"] != "a" {
		t.Fatalf("updated metadata: labels %v annotations %v; want drop gone, someone=else kept, cost 8", u.Labels, u.Annotations)
	}
	if again := updateVIP(u, p.services[key][0]); again != nil {
		t.Fatalf("updating twice changes again: labels %v annotations %v", again.Labels, again.Annotations)
	}
}
