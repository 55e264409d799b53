package gatewayapi

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
)

// FleetGroup is the gateway group of the dedicated fleet of Gateway
// namespace/name of a class served by group: "<group>.<namespace>.<name>",
// a head and a hash when longer than 63 characters (a label value and a
// model name). Groups and namespaces hold no dots, so two Gateways never
// share one. The operator runs l7 serve --group with it beside that
// fleet's Envoys.
func FleetGroup(group, namespace, name string) string {
	return modelName(group, namespace, name)
}

// fleetGroup is the gateway group that serves gw, a Gateway of a class of
// group: group itself, or FleetGroup when gw asks for a dedicated fleet
// (api.AnnotationFleet). A Gateway with an invalid value is not accepted
// (invalidFleet) and keeps group.
func fleetGroup(gw *gatewayv1.Gateway, group string) string {
	if group == "" || gw.Annotations[api.AnnotationFleet] != api.FleetDedicated {
		return group
	}
	return FleetGroup(group, gw.Namespace, gw.Name)
}

// invalidFleet says why gw's api.AnnotationFleet is not one TLB knows
// ("" when it is absent or valid).
func invalidFleet(gw *gatewayv1.Gateway) string {
	v, ok := gw.Annotations[api.AnnotationFleet]
	if !ok || v == api.FleetShared || v == api.FleetDedicated {
		return ""
	}
	return fmt.Sprintf("metadata.annotations[%s]: want %q or %q, got %q", api.AnnotationFleet, api.FleetShared, api.FleetDedicated, v)
}
