package translate

import (
	"regexp"
	"strings"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// The route fields Gateway API brought to the model (model/gatewayapi.go),
// translated for every source alike: path and method matches, query and
// header regex matches, weights of 0, redirects, URL rewrites and request
// mirrors.

// routeMatch is what a route matches: its path (prefix, exact path or
// RE2 regex), its method (the :method pseudo-header), its headers and
// its query parameters.
func routeMatch(r model.Route) *route.RouteMatch {
	m := &route.RouteMatch{}
	switch {
	case r.Regex != "":
		m.PathSpecifier = &route.RouteMatch_SafeRegex{SafeRegex: &matcher.RegexMatcher{Regex: r.Regex}}
	case r.Exact != "":
		m.PathSpecifier = &route.RouteMatch_Path{Path: r.Exact}
	case r.SegmentPrefix && segment(r.Prefix) != "":
		m.PathSpecifier = &route.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: segment(r.Prefix)}
	default:
		m.PathSpecifier = &route.RouteMatch_Prefix{Prefix: r.Prefix}
	}
	if r.Method != "" {
		m.Headers = append(m.Headers, &route.HeaderMatcher{Name: ":method", HeaderMatchSpecifier: &route.HeaderMatcher_StringMatch{
			StringMatch: exactOrRegex(r.Method, "")}})
	}
	for _, h := range r.Headers {
		hm := &route.HeaderMatcher{Name: h.Name}
		if h.Exact != "" || h.Regex != "" {
			hm.HeaderMatchSpecifier = &route.HeaderMatcher_StringMatch{StringMatch: exactOrRegex(h.Exact, h.Regex)}
		} else {
			hm.HeaderMatchSpecifier = &route.HeaderMatcher_PresentMatch{PresentMatch: true}
		}
		m.Headers = append(m.Headers, hm)
	}
	for _, q := range r.Queries {
		m.QueryParameters = append(m.QueryParameters, &route.QueryParameterMatcher{Name: q.Name,
			QueryParameterMatchSpecifier: &route.QueryParameterMatcher_StringMatch{StringMatch: exactOrRegex(q.Exact, q.Regex)}})
	}
	return m
}

// segment is a segment prefix as Envoy's path_separated_prefix takes it:
// without the trailing "/" ("" for "/", which stays a plain prefix).
func segment(prefix string) string { return strings.TrimSuffix(prefix, "/") }

func exactOrRegex(exact, regex string) *matcher.StringMatcher {
	if regex != "" {
		return &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_SafeRegex{SafeRegex: &matcher.RegexMatcher{Regex: regex}}}
	}
	return &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_Exact{Exact: exact}}
}

// liveTargets returns the targets that get traffic: a lone target, or
// those of positive weight among several (none when all weigh 0).
func liveTargets(r model.Route) []model.WeightedTarget {
	if len(r.Targets) == 1 {
		return r.Targets
	}
	var out []model.WeightedTarget
	for _, t := range r.Targets {
		if t.Weight > 0 {
			out = append(out, t)
		}
	}
	return out
}

// noLiveTarget reports whether every one of a route's several targets
// weighs 0: the route then answers 500, as Gateway API asks.
func noLiveTarget(r model.Route) bool { return len(r.Targets) > 1 && len(liveTargets(r)) == 0 }

// clusterSpecifier sends to the route's live targets: one cluster, or
// weighted clusters. A route's failed weight goes to
// model.FailedBackendCluster,
// which no resource defines: Envoy answers that share with the route's
// cluster_not_found_response_code, 500, or 503 (gRPC's UNAVAILABLE) when
// the route's FailedStatus asks for it.
func clusterSpecifier(a *route.RouteAction, svc string, r model.Route) {
	live := liveTargets(r)
	if len(live) == 1 && r.FailedWeight == 0 && live[0].Headers == nil {
		a.ClusterSpecifier = &route.RouteAction_Cluster{Cluster: model.ClusterName(svc, live[0].Upstream)}
		return
	}
	wc := &route.WeightedCluster{}
	for _, t := range live {
		wc.Clusters = append(wc.Clusters, targetHeaders(&route.WeightedCluster_ClusterWeight{
			Name: model.ClusterName(svc, t.Upstream), Weight: u32(max(t.Weight, 1))}, t.Headers))
	}
	if r.FailedWeight > 0 {
		wc.Clusters = append(wc.Clusters, &route.WeightedCluster_ClusterWeight{Name: model.FailedBackendCluster, Weight: u32(r.FailedWeight)})
		a.ClusterNotFoundResponseCode = route.RouteAction_INTERNAL_SERVER_ERROR
		if r.FailedStatus == 503 {
			a.ClusterNotFoundResponseCode = route.RouteAction_SERVICE_UNAVAILABLE
		}
	}
	a.ClusterSpecifier = &route.RouteAction_WeightedClusters{WeightedClusters: wc}
}

// urlRewrite sets a route's Host rewrite (host_rewrite_literal) and path
// rewrite (prefix_rewrite, or regex_rewrite for a whole path).
func urlRewrite(a *route.RouteAction, r model.Route) {
	u := r.URLRewrite
	if u == nil {
		return
	}
	if u.Hostname != "" {
		a.HostRewriteSpecifier = &route.RouteAction_HostRewriteLiteral{HostRewriteLiteral: u.Hostname}
	}
	switch p := u.Path; {
	case p == nil:
	case p.IsPrefix:
		a.PrefixRewrite, a.RegexRewrite = prefixRewrite(r, p.ReplacePrefix)
	default:
		a.RegexRewrite = fullPathRewrite(p.Full)
	}
}

// prefixRewrite replaces a route's matched prefix: prefix_rewrite, except
// for a replacement of "/" (or nothing), where "/api/x" must become "/x",
// not "//x": a regex that also eats the slashes after the prefix. A
// segment prefix matched without its trailing "/", so the replacement
// drops its own ("/api" to "/v2/" makes "/api/x" "/v2/x"), except under
// the prefix "/", which keeps the "/" it matched.
func prefixRewrite(r model.Route, repl string) (string, *matcher.RegexMatchAndSubstitute) {
	if repl != "/" && repl != "" {
		switch {
		case r.SegmentPrefix && segment(r.Prefix) == "":
			return segment(repl) + "/", nil
		case r.SegmentPrefix:
			return segment(repl), nil
		}
		return repl, nil
	}
	return "", &matcher.RegexMatchAndSubstitute{
		Pattern:      &matcher.RegexMatcher{Regex: "^" + regexp.QuoteMeta(segment(r.Prefix)) + "/*"},
		Substitution: "/",
	}
}

// fullPathRewrite replaces the whole path (the query string is kept).
func fullPathRewrite(full string) *matcher.RegexMatchAndSubstitute {
	return &matcher.RegexMatchAndSubstitute{
		Pattern:      &matcher.RegexMatcher{Regex: "^/.*$"},
		Substitution: strings.ReplaceAll(full, `\`, `\\`),
	}
}

// requestMirrors copies a share of the route's requests to the mirror
// upstreams (request_mirror_policies, runtime_fraction out of 100).
func requestMirrors(a *route.RouteAction, svc string, r model.Route) {
	for _, m := range r.Mirrors {
		p := m.Percent
		if p == 0 {
			p = 100
		}
		a.RequestMirrorPolicies = append(a.RequestMirrorPolicies, &route.RouteAction_RequestMirrorPolicy{
			Cluster: model.ClusterName(svc, m.Upstream),
			RuntimeFraction: &core.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{
				Numerator: p, Denominator: typev3.FractionalPercent_HUNDRED}},
		})
	}
}

// redirectCodes are Envoy's names of the redirect statuses the model
// allows; zero (unset) is 302.
var redirectCodes = map[int]route.RedirectAction_RedirectResponseCode{
	0:   route.RedirectAction_FOUND,
	301: route.RedirectAction_MOVED_PERMANENTLY,
	302: route.RedirectAction_FOUND,
	303: route.RedirectAction_SEE_OTHER,
	307: route.RedirectAction_TEMPORARY_REDIRECT,
	308: route.RedirectAction_PERMANENT_REDIRECT,
}

// redirectAction is a route's redirect: scheme, host, port and path
// (whole, or the matched prefix replaced), with the status asked (302 by
// default). listenerPort is the port a redirect to another host keeps
// (0: none to keep; see listenerRedirectPort).
func redirectAction(r model.Route, listenerPort uint32) *route.RedirectAction {
	rd := r.Redirect
	a := &route.RedirectAction{HostRedirect: rd.Hostname, PortRedirect: rd.Port, ResponseCode: redirectCodes[rd.StatusCode]}
	if keepsListenerPort(rd) {
		a.PortRedirect = listenerPort
	}
	if rd.Scheme != "" {
		a.SchemeRewriteSpecifier = &route.RedirectAction_SchemeRedirect{SchemeRedirect: rd.Scheme}
	}
	switch p := rd.Path; {
	case p == nil:
	case p.IsPrefix:
		if pr, re := prefixRewrite(r, p.ReplacePrefix); re != nil {
			a.PathRewriteSpecifier = &route.RedirectAction_RegexRewrite{RegexRewrite: re}
		} else {
			a.PathRewriteSpecifier = &route.RedirectAction_PrefixRewrite{PrefixRewrite: pr}
		}
	default:
		a.PathRewriteSpecifier = &route.RedirectAction_PathRedirect{PathRedirect: p.Full}
	}
	return a
}

// gatewayAPIAction replaces a built route's forwarding action with a
// redirect (listenerPort: see redirectAction), or with a 500 when every target weighs 0. The response
// settings applied after it (maintenance, a direct response, the HTTPS
// redirect) still take precedence.
func gatewayAPIAction(rt *route.Route, r model.Route, listenerPort uint32) {
	switch {
	case r.Redirect != nil:
		rt.Action = &route.Route_Redirect{Redirect: redirectAction(r, listenerPort)}
	case noLiveTarget(r):
		rt.Action = &route.Route_DirectResponse{DirectResponse: &route.DirectResponseAction{Status: 500}}
	}
}
