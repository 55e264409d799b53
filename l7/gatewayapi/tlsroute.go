package gatewayapi

import (
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// tlsRoutes translates the TLSRoutes attached to our TLS listeners
// (passthrough, or terminate: tlsterminate.go): each becomes SNI targets
// of those listeners, and a model
// service per gateway group that holds the clusters they forward to
// (served on no listener: only its upstreams are used).
func (b *builder) tlsRoutes() {
	for _, tr := range sortedByAge(b.in.TLSRoutes) {
		rb := b.newRouteBuild(kindTLSRoute, tr.Namespace, tr.Generation, false)
		var refs []gatewayv1.BackendRef
		for _, rule := range tr.Spec.Rules {
			refs = append(refs, rule.BackendRefs...)
		}
		targets, failed, none := rb.targets("spec.rules", refs)
		ups := rb.ups
		if failed > 0 || none {
			// The spec (TLSRouteRule.BackendRefs): "the underlying
			// implementation must actively reject request attempts to
			// this backend, by rejecting the connection. Request
			// rejections must respect weight". That share goes to an
			// upstream without endpoints, whose connections Envoy closes;
			// it used to go to the valid backends.
			targets = append(targets, model.WeightedTarget{Upstream: rejectUpstream, Weight: max(failed, 1)})
			ups = append(slices.Clone(ups), model.Upstream{Name: rejectUpstream})
		}
		r := route{kind: kindTLSRoute, namespace: tr.Namespace, gen: tr.Generation, hostnames: tr.Spec.Hostnames, parents: tr.Spec.ParentRefs}
		parents := b.attach(r, rb.ok())
		if len(parents) == 0 {
			continue
		}
		res := rb.resolvedRefs()
		st := gatewayv1.TLSRouteStatus{}
		for _, p := range parents {
			st.Parents = append(st.Parents, parentStatus(p, res))
		}
		b.out.Status.TLSRoutes[nn(tr.Namespace, tr.Name)] = st
		b.passthrough(tr, parents, targets, ups)
	}
}

// rejectUpstream is the upstream, without endpoints, that takes a
// TLSRoute's share of invalid backends (upstreams of Services hold dots:
// no name clash).
const rejectUpstream = "invalid-backends"

// passthrough adds the SNI targets of tr to the listeners it attached to,
// and the services that hold its clusters.
func (b *builder) passthrough(tr *gatewayv1.TLSRoute, parents []parent, targets []model.WeightedTarget, ups []model.Upstream) {
	key := routeKey{kindTLSRoute, nn(tr.Namespace, tr.Name)}
	svcOf := map[string]int{} // gateway group -> index in Config.Services
	for _, p := range parents {
		if !p.g.programmed() {
			continue
		}
		for _, m := range p.matches {
			if !m.l.programmable() || m.isolated {
				continue
			}
			i, ok := svcOf[p.g.group]
			if !ok {
				i = len(b.out.Config.Services)
				svcOf[p.g.group] = i
				name := "tr"
				if len(svcOf) > 1 {
					name = fmt.Sprintf("tr%d", len(svcOf)-1)
				}
				b.out.Config.Services = append(b.out.Config.Services, model.Service{
					Name:      modelName(name, tr.Namespace, tr.Name),
					Group:     p.g.group,
					Origin:    model.Origin(tr.Namespace + "/" + tr.Name),
					Namespace: tr.Namespace,
					Created:   tr.CreationTimestamp.UTC(),
					Routes:    []model.Route{{Name: "passthrough", Prefix: "/", Targets: slices.Clone(targets)}},
					Upstreams: slices.Clone(ups),
					// on no listener; allowedRoutes governed the attachment
					GatewayAPI: true,
				})
				b.routeServices[key] = append(b.routeServices[key], i)
			}
			svc := b.out.Config.Services[i]
			var cs []model.WeightedCluster
			for _, wt := range targets {
				cs = append(cs, model.WeightedCluster{Cluster: model.ClusterName(svc.Name, wt.Upstream), Weight: wt.Weight})
			}
			m.l.passthrough = append(m.l.passthrough, m.l.sniTargets(m.hosts, cs)...)
			if len(m.hosts) > 0 {
				// The service is served on no listener; its hosts name
				// the SNI names it serves (a Gateway API service claims
				// no host in the model: allowedRoutes governed it).
				hs := append(b.out.Config.Services[i].Hosts, m.hosts...)
				slices.Sort(hs)
				b.out.Config.Services[i].Hosts = slices.Compact(hs)
			}
		}
	}
}
