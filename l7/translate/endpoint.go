package translate

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// Endpoints returns one ClusterLoadAssignment per EDS cluster of the group,
// in one locality of weight 1 (gRPC ignores localities without weight).
// An upstream named by DNS has none: its cluster resolves the name.
func Endpoints(r model.Resolved, group string) []*endpoint.ClusterLoadAssignment {
	var out []*endpoint.ClusterLoadAssignment
	for _, s := range servicesOf(r, group) {
		for _, u := range s.Upstreams {
			if u.DNS != nil {
				continue
			}
			cla := &endpoint.ClusterLoadAssignment{ClusterName: model.ClusterName(s.Name, u.Name)}
			loc := &endpoint.LocalityLbEndpoints{
				Locality:            &core.Locality{Zone: group},
				LoadBalancingWeight: u32(1),
			}
			for _, e := range u.Endpoints {
				w := e.Weight
				if w == 0 {
					w = 1
				}
				loc.LbEndpoints = append(loc.LbEndpoints, &endpoint.LbEndpoint{
					HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{
						Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
							Address:       e.Addr.Addr().String(),
							PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(e.Addr.Port())},
						}}},
					}},
					LoadBalancingWeight: u32(w),
				})
			}
			cla.Endpoints = []*endpoint.LocalityLbEndpoints{loc}
			out = append(out, cla)
		}
	}
	return out
}
