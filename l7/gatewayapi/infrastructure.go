package gatewayapi

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
)

// invalidParameters says why g's spec.infrastructure.parametersRef is
// refused ("" when it names none). TLB reads no per-Gateway parameters
// (the class's GatewayClassConfig places every Gateway of a class), so
// any reference is one it cannot honour; the spec
// (GatewayInfrastructure.ParametersRef): "If the referent cannot be
// found, refers to an unsupported kind, or when the data within that
// resource is malformed, the Gateway SHOULD be rejected with the
// "Accepted" status condition set to "False" and an "InvalidParameters"
// reason." Its labels and annotations are carried by l7/gatewayctl to
// the VIP Service.
func invalidParameters(gw *gatewayv1.Gateway) string {
	inf := gw.Spec.Infrastructure
	if inf == nil || inf.ParametersRef == nil {
		return ""
	}
	ref := inf.ParametersRef
	return fmt.Sprintf("spec.infrastructure.parametersRef: %s/%s %q is not supported; TLB reads no per-Gateway parameters (set them on the class's GatewayClassConfig; Envoys of its own: the annotation %s: %s)",
		ref.Group, ref.Kind, ref.Name, api.AnnotationFleet, api.FleetDedicated)
}
