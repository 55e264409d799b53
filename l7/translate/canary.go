package translate

import (
	"regexp"
	"strings"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
)

// Canary: a route with a canary gets, before it, a copy per header or
// cookie match that sends to the canary upstream (one header matcher
// more, so it sorts first among routes of the same path), and its own
// target shares Percent of the rest with the canary by weight.

// CanaryRouteName names the copy of a route that a header or cookie
// ("header", "cookie") sends to its canary.
func CanaryRouteName(route, by string) string { return route + "~canary-" + by }

// canaryPercent splits a route with a percentage canary between its
// target and the canary, per request (weighted clusters). 100 sends
// everything to the canary.
func canaryPercent(a *route.RouteAction, svc string, r model.Route) {
	c := r.Canary
	if c == nil || c.Percent == 0 || len(r.Targets) != 1 {
		return
	}
	canary := model.ClusterName(svc, c.Upstream)
	if c.Percent >= 100 {
		a.ClusterSpecifier = &route.RouteAction_Cluster{Cluster: canary}
		return
	}
	a.ClusterSpecifier = &route.RouteAction_WeightedClusters{WeightedClusters: &route.WeightedCluster{Clusters: []*route.WeightedCluster_ClusterWeight{
		{Name: model.ClusterName(svc, r.Targets[0].Upstream), Weight: u32(100 - c.Percent)},
		{Name: canary, Weight: u32(c.Percent)},
	}}}
}

// canaryRoutes returns the header and cookie copies of s's i-th route
// under host, built from its proto b (same per-route filter
// configuration), each sending every request to the canary.
func canaryRoutes(host string, s model.Service, i int, b *route.Route) []hostRoute {
	rt := s.Routes[i]
	c := rt.Canary
	if c == nil {
		return nil
	}
	var out []hostRoute
	add := func(by string, hm *route.HeaderMatcher) {
		cp := proto.Clone(b).(*route.Route)
		cp.Name = CanaryRouteName(b.GetName(), by)
		cp.Match.Headers = append(cp.Match.Headers, hm)
		if a := cp.GetRoute(); a != nil {
			a.ClusterSpecifier = &route.RouteAction_Cluster{Cluster: model.ClusterName(s.Name, c.Upstream)}
		}
		m := rt
		m.Headers = append(append([]model.HeaderMatch(nil), rt.Headers...), model.HeaderMatch{Name: hm.GetName(), Present: true})
		out = append(out, hostRoute{host: host, svc: s.Name, claim: claimOf(s), idx: i, route: &m, built: cp})
	}
	if h := c.Header; h != nil {
		add("header", &route.HeaderMatcher{Name: h.Name, HeaderMatchSpecifier: &route.HeaderMatcher_StringMatch{
			StringMatch: &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_Exact{Exact: h.Value}}}})
	}
	if k := c.Cookie; k != nil {
		add("cookie", &route.HeaderMatcher{Name: "cookie", HeaderMatchSpecifier: &route.HeaderMatcher_StringMatch{
			StringMatch: &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_SafeRegex{SafeRegex: &matcher.RegexMatcher{
				Regex: cookieRegex(k.Name, k.Value)}}}}})
	}
	return out
}

// cookieRegex matches a Cookie header (Envoy joins several with "; ")
// that carries name=value as one of its pairs.
func cookieRegex(name, value string) string {
	return `(^|.*;\s*)` + regexp.QuoteMeta(name) + `=` + regexp.QuoteMeta(value) + `(;.*|\s*)$`
}

// internCanaries makes an unchanged canary copy the same pointer as last
// time, so an unchanged route table is reused.
func (c *Cache) internCanaries(hrs []hostRoute) {
	for i := range hrs {
		if strings.Contains(hrs[i].built.GetName(), "~canary-") {
			hrs[i].built = intern(c.shared, hrs[i].built)
		}
	}
}
