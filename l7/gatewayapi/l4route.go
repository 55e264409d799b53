package gatewayapi

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// l4Route is what TCPRoutes and UDPRoutes share: their rules hold only
// backendRefs, and every connection (TCP) or datagram session (UDP) of
// the listeners they attach to goes to those backends, weighted.
type l4Route struct {
	kind    string
	meta    metav1.ObjectMeta
	parents []gatewayv1.ParentReference
	refs    []gatewayv1.BackendRef
}

// l4Route attaches r to its Gateways' TCP or UDP listeners and returns
// its status; ok is false when no parentRef names a Gateway of ours. A
// listener forwards for its oldest route (routes come oldest first); a
// newer one is attached and accepted but gets no traffic there, as the
// spec's conflict rules (and TCPRouteMultipleRoutesAttachment) ask.
func (b *builder) l4Route(r l4Route) (gatewayv1.RouteStatus, bool) {
	rb := b.newRouteBuild(r.kind, r.meta.Namespace, r.meta.Generation, false)
	if r.kind == kindUDPRoute {
		rb.proto = corev1.ProtocolUDP
	}
	targets, failed, none := rb.targets("spec.rules", r.refs)
	ups := rb.ups
	if r.kind == kindUDPRoute && !none {
		// Envoy's UDP proxy forwards to one cluster: the weights
		// between backends become its endpoints' weights. The share of
		// invalid backends cannot be dropped there; it goes to the
		// valid ones (ResolvedRefs names the invalid ones).
		up := weightedUpstream(targets, ups)
		targets, ups, failed = []model.WeightedTarget{{Upstream: up.Name, Weight: 1}}, []model.Upstream{up}, 0
	}
	if failed > 0 || none {
		// As a TLSRoute's: the share of invalid backends goes to an
		// upstream without endpoints, whose connections Envoy closes
		// (and whose datagrams it drops).
		targets = append(targets, model.WeightedTarget{Upstream: rejectUpstream, Weight: max(failed, 1)})
		ups = append(slices.Clone(ups), model.Upstream{Name: rejectUpstream})
	}
	rt := route{kind: r.kind, namespace: r.meta.Namespace, gen: r.meta.Generation, parents: r.parents}
	parents := b.attach(rt, rb.ok())
	if len(parents) == 0 {
		return gatewayv1.RouteStatus{}, false
	}
	res := rb.resolvedRefs()
	var st gatewayv1.RouteStatus
	for _, p := range parents {
		st.Parents = append(st.Parents, parentStatus(p, res))
	}
	b.forward(r, parents, targets, ups)
	return st, true
}

// forward makes r's clusters the forward targets of the listeners it
// attached to that have none yet, and adds the services that hold them,
// one per gateway group (served on no listener: only its upstreams are
// used).
func (b *builder) forward(r l4Route, parents []parent, targets []model.WeightedTarget, ups []model.Upstream) {
	key := routeKey{r.kind, nn(r.meta.Namespace, r.meta.Name)}
	prefix := map[string]string{kindTCPRoute: "tcp", kindUDPRoute: "udp"}[r.kind]
	svcOf := map[string]string{} // gateway group -> model service
	for _, p := range parents {
		if !p.g.programmed() {
			continue
		}
		for _, m := range p.matches {
			if !m.l.programmable() || m.l.forward != nil {
				continue
			}
			svc, ok := svcOf[p.g.group]
			if !ok {
				name := prefix
				if len(svcOf) > 0 {
					name = fmt.Sprintf("%s%d", prefix, len(svcOf))
				}
				svc = modelName(name, r.meta.Namespace, r.meta.Name)
				svcOf[p.g.group] = svc
				b.routeServices[key] = append(b.routeServices[key], len(b.out.Config.Services))
				b.out.Config.Services = append(b.out.Config.Services, model.Service{
					Name: svc, Group: p.g.group, Namespace: r.meta.Namespace,
					Origin:  model.Origin(r.meta.Namespace + "/" + r.meta.Name),
					Created: r.meta.CreationTimestamp.UTC(),
					Routes:  []model.Route{{Name: "forward", Prefix: "/", Targets: slices.Clone(targets)}},
					// on no listener; allowedRoutes governed the attachment
					Upstreams: slices.Clone(ups), GatewayAPI: true,
				})
			}
			for _, t := range targets {
				m.l.forward = append(m.l.forward, model.WeightedCluster{Cluster: model.ClusterName(svc, t.Upstream), Weight: t.Weight})
			}
		}
	}
}

// weightedUpstream is one upstream holding the endpoints of every target
// (upstreams of ups), each weighted so that a target's endpoints together
// get its weight's share: weight w of a target with n endpoints gives
// each w*L/n, L the least common multiple of the targets' endpoint
// counts. A target without endpoints gets nothing. A lone target is its
// own upstream.
func weightedUpstream(targets []model.WeightedTarget, ups []model.Upstream) model.Upstream {
	byName := map[string]model.Upstream{}
	for _, u := range ups {
		byName[u.Name] = u
	}
	if len(targets) == 1 {
		return byName[targets[0].Upstream]
	}
	l := uint64(1)
	for _, t := range targets {
		if n := uint64(len(byName[t.Upstream].Endpoints)); n > 0 {
			l = lcm(l, n)
		}
	}
	weights := map[model.Endpoint]uint64{}
	var order []model.Endpoint
	for _, t := range targets {
		es := byName[t.Upstream].Endpoints
		for _, e := range es {
			k := model.Endpoint{Addr: e.Addr}
			if _, seen := weights[k]; !seen {
				order = append(order, k)
			}
			weights[k] += uint64(t.Weight) * l / uint64(len(es))
		}
	}
	out := model.Upstream{Name: "weighted"}
	for _, e := range order {
		// Envoy takes at most 2^32-1 per endpoint and in all; the
		// weights of a route (at most 1,000,000 each, 16 backends) and
		// endpoint counts of a test or a real Service stay far below.
		e.Weight = uint32(min(weights[e], 1<<24))
		if e.Weight > 0 {
			out.Endpoints = append(out.Endpoints, e)
		}
	}
	slices.SortFunc(out.Endpoints, func(a, b model.Endpoint) int { return a.Addr.Compare(b.Addr) })
	return out
}

func lcm(a, b uint64) uint64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
