package translate

import (
	"net/netip"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate/ratelimitenvoy"
)

// GlobalRateLimitFilter is the HTTP filter name of Envoy's (global) rate
// limit filter, which calls the rate limit service.
const GlobalRateLimitFilter = ratelimitenvoy.GlobalFilterName

// RateLimitCluster is the cluster through which gateways reach the rate
// limit service.
const RateLimitCluster = ratelimitenvoy.ServiceCluster

// globalRateLimitDomain is the rate limit domain of a gateway listener
// serving svcs: its group when the operator configured a rate limit
// service and a route of svcs has a global limit; "" otherwise (no
// filter, no actions).
func globalRateLimitDomain(el model.EnvoyListener, svcs []model.Service) string {
	if el.RateLimitService == nil {
		return ""
	}
	for _, s := range svcs {
		for _, r := range s.Routes {
			if l := model.EffectiveRateLimit(s, r); l != nil && l.Global != nil {
				return el.Group
			}
		}
	}
	return ""
}

// globalRateLimitActions are the rate_limits of a service's i-th route on
// a listener running the global filter: the descriptors the rate limit
// service's configuration (ratelimit.Service) counts, keyed by
// model.RouteID. Nil without the filter or without a global limit.
func globalRateLimitActions(s model.Service, i int, f httpFilters) []*route.RateLimit {
	if f.globalRL == "" {
		return nil
	}
	return ratelimitenvoy.RouteRateLimits(model.RouteLimits(s, i))
}

// rateLimitCluster is the cluster of the group's rate limit service when
// one of the group's gateway listeners runs the global filter; nil
// otherwise.
func rateLimitCluster(r model.Resolved, group string) *cluster.Cluster {
	byName := map[string]model.Service{}
	for _, s := range servicesOf(r, group) {
		byName[s.Name] = s
	}
	for _, el := range r.Listeners {
		if el.Group != group || !servesRoutes(el) {
			continue
		}
		if globalRateLimitDomain(el, servicesOn(el, byName)) != "" {
			return rateLimitClusterFor(el, nil)
		}
	}
	return nil
}

// rateLimitClusterFor is the cluster of the rate limit service a
// listener's global filter calls, resolved by the resolvers when named by
// DNS.
func rateLimitClusterFor(el model.EnvoyListener, resolvers []netip.AddrPort) *cluster.Cluster {
	c := ratelimitenvoy.Cluster(el.RateLimitService.Host, el.RateLimitService.Port)
	withDNSResolvers(c, resolvers)
	return c
}

// withRateLimitCluster adds the rate limit service's cluster, when the
// group needs it, to a gateway resource set (out, whose cluster list may
// be shared and is copied, not changed). Proxyless gRPC clients never
// get it: they run no rate limit filter.
func withRateLimitCluster(out Resources, r model.Resolved, group string) {
	c := rateLimitCluster(r, group)
	if c == nil {
		return
	}
	withDNSResolvers(c, r.DNSResolvers)
	cs := make([]types.Resource, 0, len(out[resource.ClusterType])+1)
	cs = append(cs, out[resource.ClusterType]...)
	out[resource.ClusterType] = append(cs, c)
}
