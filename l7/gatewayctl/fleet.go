package gatewayctl

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// withFleet records in ann, the annotations of gw's VIP Service, the
// gateway group of gw's dedicated fleet when gw asks for one
// (api.AnnotationFleet), the group gatewayapi.Build serves it to: the
// operator reads there which group to run (docs/gateway-api.md, "A fleet
// of its own"). The VIP itself stays with the class's group (group): its
// gateway nodes bind it, and the dedicated fleet runs on them.
func withFleet(ann map[string]string, gw *gatewayv1.Gateway, group string) {
	if gw.Annotations[api.AnnotationFleet] == api.FleetDedicated {
		ann[api.AnnotationFleetGroup] = gatewayapi.FleetGroup(group, gw.Namespace, gw.Name)
	}
}
