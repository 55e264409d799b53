package translate

import (
	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate/ratelimitenvoy"
)

// httpFilters says which HTTP filters a gateway listener's connection
// manager runs before the router. A filter is there only when a route
// served on the listener asks for it, and then every route of the
// listener carries that filter's per-route configuration (a route that
// did not ask disables it), so what one route asks for never reaches
// another: seed 000's basicAuth incident.
type httpFilters struct {
	// authz: ext_authz to the authorization service.
	authz bool
	// jwt: jwt_authn.
	jwt bool
	// identity: the headers gateway functions of the listener set from a
	// verified identity (claims, sessions), comma-joined; header_mutation
	// removes them from every client request of the listener (see
	// identity.go). "" for none.
	identity string
	// rbac: roles from the verified token's claims.
	rbac bool
	// cors: cross-origin policies and preflights.
	cors bool
	// localRL: local_ratelimit, a token bucket per client IP on the
	// routes that ask (inert on the others).
	localRL bool
	// globalRL: the ratelimit filter with this domain (the group), calling
	// the rate limit service for the routes with global limits; "" none.
	globalRL string
	// errorPages: custom_response, the error pages of the routes that
	// have some (inert on the others).
	errorPages bool
	// proto is the protocol of the gateway listener the routes are built
	// for ("" for proxyless gRPC clients): redirects to HTTPS and HSTS
	// depend on it (see applyResponses). It adds no filter.
	proto model.Protocol
	// accessLogOff: header_to_metadata, marking the requests of the
	// services whose access log is off.
	accessLogOff bool
	// websocket: not a filter; the connection manager declares the
	// WebSocket upgrade (see edge.go).
	websocket bool
	// tracing: not a filter; the gateway's span export (see tracing.go).
	tracing listenerTracing
	// xffTrustedHops: not a filter; the connection manager's
	// xff_num_trusted_hops (model.Listener.XFFTrustedHops).
	xffTrustedHops uint32
	// redirectPort: not a filter; the listener's port where its
	// redirects to another host must keep it (see redirectport.go), 0
	// elsewhere.
	redirectPort uint32
}

// filtersOf returns the filters the routes of svcs need.
func filtersOf(svcs []model.Service) httpFilters {
	return httpFilters{authz: hasInterceptors(svcs), jwt: hasJWT(svcs), identity: identityHeaders(svcs), rbac: hasRoles(svcs), cors: hasCORS(svcs),
		localRL: hasLocalRateLimit(svcs), accessLogOff: hasAccessLogOff(svcs), websocket: hasWebSocket(svcs),
		errorPages: hasErrorPages(svcs)}
}

// servicesOn returns the services of a listener, by name from byName.
func servicesOn(el model.EnvoyListener, byName map[string]model.Service) []model.Service {
	out := make([]model.Service, 0, len(el.Services))
	for _, n := range el.Services {
		out = append(out, byName[n])
	}
	return out
}

// httpFilter is one HTTP filter a gateway listener's connection manager
// may run: on says whether the listener's routes need it, build makes it.
type httpFilter struct {
	name  string
	on    func(f httpFilters) bool
	build func(f httpFilters, jwt *jwtauthn.JwtAuthentication) *hcm.HttpFilter
}

// httpFilterOrder is every HTTP filter of a gateway listener, in the order
// the connection manager runs them, router last: the access log mark
// first (it marks even the requests a later filter answers), the error
// pages, CORS (preflights carry no credentials), then identity (the
// identity headers of the listener cleared, before anything sets one; the
// token verified; roles checked), then the interceptors, which see the
// verified claims' headers, then the rate limits, which count only the
// requests that got through: the local bucket first (per gateway, no
// network call), then the global limit, so a flood one gateway already
// refuses costs the rate limit service and Redis nothing.
func httpFilterOrder() []httpFilter {
	return []httpFilter{
		{HeaderToMetadataFilter, func(f httpFilters) bool { return f.accessLogOff }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return headerToMetadataFilter() }},
		{CustomResponseFilter, func(f httpFilters) bool { return f.errorPages }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return customResponseFilter() }},
		{CORSFilter, func(f httpFilters) bool { return f.cors }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return corsFilter() }},
		{HeaderMutationFilter, func(f httpFilters) bool { return f.jwt || f.identity != "" }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return headerMutationFilter() }},
		{JWTFilter, func(f httpFilters) bool { return f.jwt }, func(_ httpFilters, jwt *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return jwtFilter(jwt) }},
		{RBACFilter, func(f httpFilters) bool { return f.rbac }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return rbacFilter() }},
		{RolesClaimFilter, func(f httpFilters) bool { return f.rbac }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return rolesClaimFilter() }},
		{ExtAuthzFilter, func(f httpFilters) bool { return f.authz }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return extAuthzFilter() }},
		{LocalRateLimitFilter, func(f httpFilters) bool { return f.localRL }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return ratelimitenvoy.LocalFilter() }},
		{GlobalRateLimitFilter, func(f httpFilters) bool { return f.globalRL != "" }, func(f httpFilters, _ *jwtauthn.JwtAuthentication) *hcm.HttpFilter {
			return ratelimitenvoy.GlobalFilter(f.globalRL)
		}},
		{wellknown.Router, func(httpFilters) bool { return true }, func(httpFilters, *jwtauthn.JwtAuthentication) *hcm.HttpFilter { return routerFilter() }},
	}
}

// chain is the connection manager's filter list: the filters of
// httpFilterOrder the listener's routes need, in that order.
func (f httpFilters) chain(jwt *jwtauthn.JwtAuthentication) []*hcm.HttpFilter {
	var out []*hcm.HttpFilter
	for _, h := range httpFilterOrder() {
		if h.on(f) {
			out = append(out, h.build(f, jwt))
		}
	}
	return out
}

// perRoute is a route's typed_per_filter_config for the listener's
// filters; nil when the listener runs none.
func (f httpFilters) perRoute(s model.Service, r model.Route) map[string]*anypb.Any {
	if f == (httpFilters{}) {
		return nil
	}
	m := map[string]*anypb.Any{}
	if f.cors {
		if c := corsPerRoute(s, r); c != nil {
			m[CORSFilter] = c
		}
	}
	if f.jwt {
		m[JWTFilter] = jwtPerRoute(s, r)
	}
	if hm := identityPerRoute(f.identity); hm != nil {
		m[HeaderMutationFilter] = hm
	}
	if f.rbac {
		m[RBACFilter] = rbacPerRoute(r)
		if c := rolesClaimPerRoute(r); c != nil {
			m[RolesClaimFilter] = c
		}
	}
	if f.authz {
		m[ExtAuthzFilter] = authzPerRoute(r)
	}
	if f.localRL {
		if l := localRateLimitPerRoute(s, r); l != nil {
			m[LocalRateLimitFilter] = l
		}
	}
	if f.errorPages {
		if p := errorPagesPerRoute(s, r); p != nil {
			m[CustomResponseFilter] = p
		}
	}
	if f.accessLogOff && s.AccessLogOff {
		m[HeaderToMetadataFilter] = accessLogOffPerRoute()
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
