package translate

import (
	"cmp"
	"slices"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	previoushosts "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlbproject/tlb/l7/model"
)

// GroupRoutes returns the RouteConfiguration of a group's proxyless gRPC
// clients: a virtual host per host name of every service they see (see
// proxylessServices).
func GroupRoutes(r model.Resolved, group string) []*route.RouteConfiguration {
	return []*route.RouteConfiguration{assembleRoutes(RouteConfigName(group), hostRoutes(proxylessServices(r, group), nil))}
}

// ListenerRoutes returns one RouteConfiguration per HTTP or HTTPS listener
// of the group, named as the listener, holding only the hosts of the
// services served on it. A listener that redirects to HTTPS gets one
// catch-all virtual host that does only that.
func ListenerRoutes(r model.Resolved, group string) []*route.RouteConfiguration {
	byName := map[string]model.Service{}
	for _, s := range servicesOf(r, group) {
		byName[s.Name] = s
	}
	var out []*route.RouteConfiguration
	for _, el := range r.Listeners {
		if el.Group != group || el.Protocol == model.TCP || el.Protocol == model.TLS {
			continue
		}
		if el.RedirectHTTPS {
			out = append(out, redirectRoutes(el.Name))
			continue
		}
		svcs := servicesOn(el, byName)
		f := filtersOf(svcs)
		f.globalRL = globalRateLimitDomain(el, svcs)
		f.proto = el.Protocol
		f.redirectPort = listenerRedirectPort(el, svcs)
		rc := hideServerHeader(assembleRoutes(el.Name, hostRoutes(svcs, func(s model.Service, i int) *route.Route {
			return routeOf(s, i, f)
		})))
		out = append(out, rc)
		out = append(out, misdirectedRoutes(el, rc)...)
	}
	return out
}

// hostRoute is one route of a service under one of its hosts.
type hostRoute struct {
	host  string
	svc   string
	claim claim
	idx   int
	route *model.Route
	built *route.Route
}

// claim is what orders the routes of Gateway API services that match
// alike, as the spec asks: the oldest route first, then by namespace/name.
// It is zero for the other services, which keep their order by service
// name.
type claim struct {
	gatewayAPI bool
	created    time.Time
	origin     model.Origin
}

func claimOf(s model.Service) claim {
	if !s.GatewayAPI {
		return claim{}
	}
	return claim{gatewayAPI: true, created: s.Created, origin: s.Origin}
}

// hostRoutes lists the routes of svcs per host; built returns the proto
// of a service's i-th route (nil: build it).
func hostRoutes(svcs []model.Service, built func(s model.Service, i int) *route.Route) []hostRoute {
	n := 0
	for _, s := range svcs {
		n += len(model.ServiceHosts(s)) * len(s.Routes)
	}
	out := make([]hostRoute, 0, n)
	for _, s := range svcs {
		for _, h := range model.ServiceHosts(s) {
			for i := range s.Routes {
				var b *route.Route
				if built != nil {
					b = built(s, i)
				} else {
					b = routeOf(s, i, httpFilters{})
				}
				out = append(out, hostRoute{host: h, svc: s.Name, claim: claimOf(s), idx: i, route: &s.Routes[i], built: b})
				out = append(out, canaryRoutes(h, s, i, b)...)
			}
		}
	}
	// Hosts sorted; within a host the most specific route first; among
	// equally specific ones, Gateway API's oldest route, then the service
	// name, then the route's place in its service.
	slices.SortStableFunc(out, func(a, b hostRoute) int {
		return cmp.Or(
			cmp.Compare(a.host, b.host),
			cmp.Compare(specificity(b.route, b.claim.gatewayAPI), specificity(a.route, a.claim.gatewayAPI)),
			cmp.Compare(hasMethod(b.route), hasMethod(a.route)),
			cmp.Compare(len(b.route.Headers), len(a.route.Headers)),
			cmp.Compare(len(b.route.Queries), len(a.route.Queries)),
			a.claim.created.Compare(b.claim.created),
			cmp.Compare(a.claim.origin, b.claim.origin),
			cmp.Compare(a.svc, b.svc),
			cmp.Compare(a.idx, b.idx))
	})
	return out
}

// assembleRoutes makes a RouteConfiguration of sorted host routes: one
// virtual host per host name. Hosts match whatever port the client names
// (Host: shop.example.com:8443 on a listener of port 8443; Envoy would
// otherwise compare the whole :authority with the names and answer 404);
// the header itself keeps its port. Gateway API asks for it
// (apis/v1/httproute_types.go, HTTPRouteSpec.Hostnames): implementations
// "MUST ignore any port value specified in the HTTP Host header while
// performing a match".
func assembleRoutes(name string, hrs []hostRoute) *route.RouteConfiguration {
	return assembleRoutesWith(name, hrs, newVirtualHost)
}

// assembleRoutesWith is assembleRoutes with the virtual hosts made by
// vhost from a host and its routes (the Cache's reuses the last ones).
func assembleRoutesWith(name string, hrs []hostRoute, vhost func(host string, routes []*route.Route) *route.VirtualHost) *route.RouteConfiguration {
	rc := &route.RouteConfiguration{Name: name, ValidateClusters: wrapperspb.Bool(false), IgnorePortInHostMatching: true}
	body := 0
	for start := 0; start < len(hrs); {
		end := start + 1
		for end < len(hrs) && hrs[end].host == hrs[start].host {
			end++
		}
		routes := make([]*route.Route, end-start)
		for i, hr := range hrs[start:end] {
			routes[i] = hr.built
			body = max(body, len(hr.built.GetDirectResponse().GetBody().GetInlineString()), len(hr.built.GetDirectResponse().GetBody().GetInlineBytes()))
		}
		rc.VirtualHosts = append(rc.VirtualHosts, vhost(hrs[start].host, routes))
		start = end
	}
	if body > envoyDirectResponseBodyLimit {
		rc.MaxDirectResponseBodySizeBytes = u32(model.MaxResponseBody)
	}
	return rc
}

// newVirtualHost is the virtual host of one host name and its routes;
// nothing else goes into it (the Cache reuses one for the same host and
// routes).
func newVirtualHost(host string, routes []*route.Route) *route.VirtualHost {
	return &route.VirtualHost{Name: host, Domains: []string{host}, Routes: routes}
}

// envoyDirectResponseBodyLimit is Envoy's default bound on a direct
// response's body (RouteConfiguration.max_direct_response_body_size_bytes):
// a route table with a longer one is refused whole. A table holding one
// raises its bound to model.MaxResponseBody, the longest body the model
// accepts; others keep the default, unchanged.
const envoyDirectResponseBodyLimit = 4096

// redirectRoutes answers every request with a redirect to https:// on the
// same host and path (301).
func redirectRoutes(name string) *route.RouteConfiguration {
	return &route.RouteConfiguration{Name: name, ValidateClusters: wrapperspb.Bool(false), IgnorePortInHostMatching: true, VirtualHosts: []*route.VirtualHost{{
		Name: "https-redirect", Domains: []string{"*"},
		Routes: []*route.Route{{
			Name:   "https-redirect",
			Match:  &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
			Action: &route.Route_Redirect{Redirect: &route.RedirectAction{SchemeRewriteSpecifier: &route.RedirectAction_HttpsRedirect{HttpsRedirect: true}}},
		}},
	}}}
}

// specificity orders routes by path: exact paths first, then regexes
// (written to be exact), then longer prefixes before shorter ones. A
// Gateway API route ranks a regex by its characters, as a prefix: the
// spec leaves regexes to the implementation and Envoy Gateway and
// Contour rank them so.
//
// A GRPCRoute's method match ranks by its Precedence instead: the
// characters of the service, then of the method (model.GRPCPrecedence).
func specificity(r *model.Route, gatewayAPI bool) int {
	switch {
	case r.Precedence > 0 && gatewayAPI:
		return r.Precedence
	case r.Exact != "":
		return 1<<21 + len(r.Exact)
	case r.Regex != "" && gatewayAPI:
		return len(r.Regex)
	case r.Regex != "":
		return 1 << 20
	}
	return len(r.Prefix)
}

// hasMethod is 1 for a route that matches a method: it goes before the
// routes of the same path without one.
func hasMethod(r *model.Route) int {
	if r.Method != "" {
		return 1
	}
	return 0
}

// RouteName is the name of a service's i-th route.
func RouteName(service string, i int, r model.Route) string { return model.RouteID(service, i, r) }

// routeOf builds a service's i-th route for a listener running the
// filters f (the zero set for proxyless gRPC clients).
func routeOf(s model.Service, i int, f httpFilters) *route.Route {
	svc, r := s.Name, s.Routes[i]
	m := routeMatch(r)
	timeout := r.Timeout
	if timeout == 0 {
		timeout = model.DefaultTimeout
	}
	if timeout < 0 {
		timeout = 0 // off: 0 disables the request timeout; the idle timeout still ends a silent stream
	}
	a := &route.RouteAction{Timeout: dur(timeout)}
	switch idle := r.IdleTimeout; {
	case idle < 0:
		a.IdleTimeout = dur(0) // 0 disables the idle timeout
	case idle == 0:
		a.IdleTimeout = dur(model.DefaultIdleTimeout)
	default:
		a.IdleTimeout = dur(idle)
	}
	clusterSpecifier(a, svc, r)
	a.UpgradeConfigs = routeUpgrades(r)
	canaryPercent(a, svc, r)
	if r.Rewrite != nil {
		a.RegexRewrite = &matcher.RegexMatchAndSubstitute{
			Pattern: &matcher.RegexMatcher{Regex: r.Rewrite.Regex}, Substitution: r.Rewrite.Substitution}
	}
	if r.Retries != nil {
		on := r.Retries.On
		if on == "" {
			on = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"
		}
		rp := &route.RetryPolicy{RetryOn: on, NumRetries: u32(r.Retries.Attempts),
			RetryHostPredicate: []*route.RetryPolicy_RetryHostPredicate{previousHosts()}, HostSelectionRetryMaxAttempts: retryHostPicks}
		if r.Retries.PerTry > 0 {
			rp.PerTryTimeout = dur(r.Retries.PerTry)
		}
		rp.RetriableStatusCodes = r.Retries.Codes
		if r.Retries.Backoff > 0 {
			// Envoy's cap is ten times the base unless set.
			rp.RetryBackOff = &route.RetryPolicy_RetryBackOff{BaseInterval: dur(r.Retries.Backoff)}
		}
		a.RetryPolicy = rp
	}
	if r.BackendTimeout > 0 {
		// Envoy's per-try timeout also bounds the first attempt; with
		// no retry policy of the route's own, one that never retries.
		if a.RetryPolicy == nil {
			a.RetryPolicy = &route.RetryPolicy{NumRetries: u32(0)}
		}
		if a.RetryPolicy.PerTryTimeout == nil {
			a.RetryPolicy.PerTryTimeout = dur(r.BackendTimeout)
		}
	}
	if r.Sticky != nil {
		c := &route.RouteAction_HashPolicy_Cookie{Name: r.Sticky.Cookie, Path: r.Sticky.Path}
		if r.Sticky.TTL > 0 {
			c.Ttl = dur(r.Sticky.TTL)
		} else {
			c.Ttl = dur(0) // session cookie, generated by Envoy
		}
		a.HashPolicy = []*route.RouteAction_HashPolicy{{PolicySpecifier: &route.RouteAction_HashPolicy_Cookie_{Cookie: c}}}
	}
	urlRewrite(a, r)
	requestMirrors(a, svc, r)
	a.RateLimits = globalRateLimitActions(s, i, f)
	rt := &route.Route{
		Name:                 RouteName(svc, i, r),
		Match:                m,
		Action:               &route.Route_Route{Route: a},
		TypedPerFilterConfig: f.perRoute(s, r),
	}
	gatewayAPIAction(rt, r, f.redirectPort)
	return applyResponses(rt, s, r, f)
}

// retryHostPicks bounds how often Envoy picks a host for a retry until
// one it has not tried comes up. Ring hash (sticky routes) walks its
// ring one entry per pick, and neighbouring entries often belong to the
// same host: with two hosts each pick finds the other one half the time.
const retryHostPicks = 10

// previousHosts makes a retry go to a host not tried yet for the request.
// Without it a sticky route's retries went to the same endpoint as the
// failed attempt, always (its cookie hashes there).
func previousHosts() *route.RetryPolicy_RetryHostPredicate {
	return &route.RetryPolicy_RetryHostPredicate{Name: "envoy.retry_host_predicates.previous_hosts",
		ConfigType: &route.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: mustAny(&previoushosts.PreviousHostsPredicate{})}}
}
