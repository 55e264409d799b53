package gatewayapi

import gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

// udpRoutes translates the UDPRoutes attached to our UDP listeners: each
// listener forwards every datagram session (client address and port) to
// its oldest route's backends (Envoy's UDP proxy; the weights are those
// of one cluster's endpoints, see weightedUpstream).
func (b *builder) udpRoutes() {
	for _, ur := range sortedByAge(b.in.UDPRoutes) {
		var refs []gatewayv1.BackendRef
		for _, rule := range ur.Spec.Rules {
			refs = append(refs, rule.BackendRefs...)
		}
		st, ok := b.l4Route(l4Route{kind: kindUDPRoute, meta: ur.ObjectMeta, parents: ur.Spec.ParentRefs, refs: refs})
		if ok {
			b.out.Status.UDPRoutes[nn(ur.Namespace, ur.Name)] = gatewayv1.UDPRouteStatus{RouteStatus: st}
		}
	}
}
