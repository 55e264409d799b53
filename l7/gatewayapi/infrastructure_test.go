package gatewayapi

import (
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestInfrastructureParametersRefRefused: TLB reads no per-Gateway
// parameters, so a Gateway naming some is not accepted (and not served);
// labels and annotations alone are fine.
func TestInfrastructureParametersRefRefused(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{Labels: map[gatewayv1.LabelKey]gatewayv1.LabelValue{"team": "a"}}
	res := Build(in)
	wantCond(t, res.Status.Gateways[gwKey].Conditions, "Accepted", true, "Accepted")

	in.Gateways[0].Spec.Infrastructure.ParametersRef = &gatewayv1.LocalParametersReference{Group: "invalid.io", Kind: "InvalidParameters", Name: "invalid"}
	res = Build(in)
	wantCond(t, res.Status.Gateways[gwKey].Conditions, "Accepted", false, "InvalidParameters")
	if len(res.Config.Gateways) != 0 {
		t.Fatalf("a Gateway with refused parameters is served: %s", jsonOf(res.Config.Gateways))
	}
}
