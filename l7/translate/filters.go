package translate

import (
	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
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
	// jwt: jwt_authn, and header_mutation before it to remove the
	// headers claims are copied to.
	jwt bool
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
}

// filtersOf returns the filters the routes of svcs need.
func filtersOf(svcs []model.Service) httpFilters {
	return httpFilters{authz: hasInterceptors(svcs), jwt: hasJWT(svcs), rbac: hasRoles(svcs), cors: hasCORS(svcs),
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

// chain is the connection manager's filter list, router last: CORS
// first (preflights carry no credentials), then identity (claim headers
// cleared, token verified, roles checked), then the interceptors, which
// see the verified claims' headers, then the rate limits, which count
// only the requests that got through: the local bucket first (per
// gateway, no network call), then the global limit, so a flood one
// gateway already refuses costs the rate limit service and Redis nothing.
func (f httpFilters) chain(jwt *jwtauthn.JwtAuthentication) []*hcm.HttpFilter {
	var out []*hcm.HttpFilter
	if f.accessLogOff {
		out = append(out, headerToMetadataFilter()) // first: marks even the requests a later filter answers
	}
	if f.errorPages {
		out = append(out, customResponseFilter())
	}
	if f.cors {
		out = append(out, corsFilter())
	}
	if f.jwt {
		out = append(out, headerMutationFilter(), jwtFilter(jwt))
	}
	if f.rbac {
		out = append(out, rbacFilter(), rolesClaimFilter())
	}
	if f.authz {
		out = append(out, extAuthzFilter())
	}
	if f.localRL {
		out = append(out, ratelimit.LocalFilter())
	}
	if f.globalRL != "" {
		out = append(out, ratelimit.GlobalFilter(f.globalRL))
	}
	return append(out, routerFilter())
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
		if hm := claimHeadersPerRoute(s); hm != nil {
			m[HeaderMutationFilter] = hm
		}
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
