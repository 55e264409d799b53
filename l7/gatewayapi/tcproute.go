package gatewayapi

import gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

// tcpRoutes translates the TCPRoutes attached to our TCP listeners: each
// listener forwards every connection to its oldest route's backends
// (Envoy's tcp_proxy, weighted per connection).
func (b *builder) tcpRoutes() {
	for _, tr := range sortedByAge(b.in.TCPRoutes) {
		var refs []gatewayv1.BackendRef
		for _, rule := range tr.Spec.Rules {
			refs = append(refs, rule.BackendRefs...)
		}
		st, ok := b.l4Route(l4Route{kind: kindTCPRoute, meta: tr.ObjectMeta, parents: tr.Spec.ParentRefs, refs: refs})
		if ok {
			b.out.Status.TCPRoutes[nn(tr.Namespace, tr.Name)] = gatewayv1.TCPRouteStatus{RouteStatus: st}
		}
	}
}
