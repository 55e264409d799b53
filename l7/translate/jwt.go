package translate

import (
	"slices"

	mutation "github.com/envoyproxy/go-control-plane/envoy/config/common/mutation_rules/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	headermutation "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_mutation/v3"
	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	rbac "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/tlbproject/tlb/l7/jwks"
	"github.com/tlbproject/tlb/l7/model"
)

// The HTTP filters of JWT authentication and roles, by name (the keys of
// their per-route configuration).
const (
	JWTFilter  = "envoy.filters.http.jwt_authn"
	RBACFilter = "envoy.filters.http.rbac"
	// RolesClaimFilter is the second RBAC filter, checking that a roles
	// claim is well formed (see rolesClaimFilter).
	RolesClaimFilter     = "tlb.roles_claim"
	HeaderMutationFilter = "envoy.filters.http.header_mutation"
)

// JWTPayloadKey is where jwt_authn puts a verified token's payload in the
// request's dynamic metadata (namespace JWTFilter); RBAC reads the roles
// claim there.
const JWTPayloadKey = "jwt_payload"

// RolesClaim is the claim that holds a token's roles: a string or an
// array of strings.
const RolesClaim = "roles"

// JWTCacheSize is how many verified tokens each Envoy worker keeps per
// provider (jwt_cache_config): a token seen again is not parsed and
// verified again, only its time limits are checked (exp, nbf; an expired
// one leaves the cache). Without it jwt_authn verifies every request's
// token from scratch. Tokens over Envoy's default 4 KiB are not cached,
// so the cache holds at most 4 MiB per provider and worker.
const JWTCacheSize = 1000

// remoteJWKSTimeout bounds one fetch of a remote JWKS.
const remoteJWKSTimeout = 5e9

func hasJWT(svcs []model.Service) bool {
	return slices.ContainsFunc(svcs, func(s model.Service) bool { return s.JWT != nil })
}

func hasRoles(svcs []model.Service) bool {
	return slices.ContainsFunc(svcs, serviceNeedsRoles)
}

func serviceNeedsRoles(s model.Service) bool {
	return slices.ContainsFunc(s.Routes, func(r model.Route) bool { return r.Auth.NeedsRoles() })
}

// requirementName names a service's requirement in the filter's
// requirement_map.
func requirementName(svc string, required bool) string {
	if required {
		return svc + "/required"
	}
	return svc + "/optional"
}

// jwtAuthentication is the jwt_authn filter of a listener: one provider
// per service with JWT settings (named as the service) and its two
// requirements. Routes pick a requirement by name or disable the filter.
//
// A service that also reads a cookie gets a second provider for it
// (<service>/cookie), and a Bearer token in Authorization wins: the
// cookie is read only when Authorization carries none, as in seed 001.
// jwt_authn alone would verify every token it finds and fail the request
// when any fails; its requirements say "the header's token, or (no
// Bearer token and the cookie's)". "No Bearer token" is the listener's
// NoBearerProvider, which no token satisfies, made optional by
// allow_missing: it passes only when Authorization has no Bearer token.
func jwtAuthentication(svcs []model.Service) *jwtauthn.JwtAuthentication {
	cfg := &jwtauthn.JwtAuthentication{
		Providers:      map[string]*jwtauthn.JwtProvider{},
		RequirementMap: map[string]*jwtauthn.JwtRequirement{},
	}
	for _, s := range svcs {
		if s.JWT == nil {
			continue
		}
		header := byProvider(s.Name)
		token := header // the service's token: the header's, else the cookie's
		cfg.Providers[s.Name] = jwtProvider(s, false)
		if s.JWT.Cookie != "" {
			cfg.Providers[s.Name+CookieProviderSuffix] = jwtProvider(s, true)
			cfg.Providers[NoBearerProvider] = noBearerProvider()
			token = jwtAnyOf(header, jwtAllOf(
				jwtAnyOf(byProvider(NoBearerProvider), &jwtauthn.JwtRequirement{RequiresType: &jwtauthn.JwtRequirement_AllowMissing{AllowMissing: &emptypb.Empty{}}}),
				byProvider(s.Name+CookieProviderSuffix)))
		}
		cfg.RequirementMap[requirementName(s.Name, true)] = token
		// Optional: the token when it verifies, else anonymous. The
		// bypass reads the locations of the list's own providers.
		optional := jwtAnyOf(header)
		if s.JWT.Cookie != "" {
			optional = proto.Clone(token).(*jwtauthn.JwtRequirement)
		}
		optional.GetRequiresAny().Requirements = append(optional.GetRequiresAny().Requirements,
			&jwtauthn.JwtRequirement{RequiresType: &jwtauthn.JwtRequirement_AllowMissingOrFailed{AllowMissingOrFailed: &emptypb.Empty{}}})
		cfg.RequirementMap[requirementName(s.Name, false)] = optional
	}
	return cfg
}

// The extra jwt_authn providers of a service reading a cookie.
const (
	// CookieProviderSuffix names a service's cookie provider
	// (<service>/cookie).
	CookieProviderSuffix = "/cookie"
	// NoBearerProvider reads Authorization's Bearer token and accepts
	// none: its issuer is no issuer's, and its one key is an Ed25519
	// public key whose 32 bytes are a SHA-256 hash ("tlb: no token is
	// signed with this key"), so nobody holds its private key (Envoy
	// refuses a provider without a valid key).
	NoBearerProvider = "tlb/no-bearer-token"
	noBearerIssuer   = "urn:tlb:no-bearer-token"
	noBearerJWKS     = `{"keys":[{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","x":"EZyUExRthqIIT7Y20LqBq34-rlK7lvWd0cUKhAJLFAs"}]}`
)

func byProvider(name string) *jwtauthn.JwtRequirement {
	return &jwtauthn.JwtRequirement{RequiresType: &jwtauthn.JwtRequirement_ProviderName{ProviderName: name}}
}

func jwtAnyOf(rs ...*jwtauthn.JwtRequirement) *jwtauthn.JwtRequirement {
	return &jwtauthn.JwtRequirement{RequiresType: &jwtauthn.JwtRequirement_RequiresAny{RequiresAny: &jwtauthn.JwtRequirementOrList{Requirements: rs}}}
}

func jwtAllOf(rs ...*jwtauthn.JwtRequirement) *jwtauthn.JwtRequirement {
	return &jwtauthn.JwtRequirement{RequiresType: &jwtauthn.JwtRequirement_RequiresAll{RequiresAll: &jwtauthn.JwtRequirementAndList{Requirements: rs}}}
}

// noBearerProvider fails every Bearer token: see NoBearerProvider.
func noBearerProvider() *jwtauthn.JwtProvider {
	return &jwtauthn.JwtProvider{
		Issuer:      noBearerIssuer,
		FromHeaders: []*jwtauthn.JwtHeader{{Name: "Authorization", ValuePrefix: "Bearer "}},
		Forward:     true,
		JwksSourceSpecifier: &jwtauthn.JwtProvider_LocalJwks{LocalJwks: &core.DataSource{
			Specifier: &core.DataSource_InlineString{InlineString: noBearerJWKS}}},
	}
}

// jwtProvider is the provider of a service's token in Authorization
// (Bearer), or in its cookie.
func jwtProvider(s model.Service, cookie bool) *jwtauthn.JwtProvider {
	j := s.JWT
	p := &jwtauthn.JwtProvider{
		Issuer:         j.Issuer,
		Audiences:      j.Audiences,
		Forward:        !j.StripAuthorization,
		JwtCacheConfig: &jwtauthn.JwtCacheConfig{JwtCacheSize: JWTCacheSize},
	}
	if cookie {
		p.FromCookies = []string{j.Cookie}
	} else {
		p.FromHeaders = []*jwtauthn.JwtHeader{{Name: "Authorization", ValuePrefix: "Bearer "}}
	}
	if serviceNeedsRoles(s) {
		p.PayloadInMetadata = JWTPayloadKey
	}
	claims := make([]string, 0, len(j.ClaimHeaders))
	for c := range j.ClaimHeaders {
		claims = append(claims, c)
	}
	slices.Sort(claims)
	for _, c := range claims {
		p.ClaimToHeaders = append(p.ClaimToHeaders, &jwtauthn.JwtClaimToHeader{ClaimName: c, HeaderName: j.ClaimHeaders[c]})
	}
	switch {
	case j.Remote != nil:
		rj := &jwtauthn.RemoteJwks{HttpUri: &core.HttpUri{
			Uri:              j.Remote.URL,
			HttpUpstreamType: &core.HttpUri_Cluster{Cluster: model.ClusterName(s.Name, j.Remote.Upstream)},
			Timeout:          dur(remoteJWKSTimeout),
		}}
		if j.Remote.CacheDuration > 0 {
			rj.CacheDuration = dur(j.Remote.CacheDuration)
		}
		rj.AsyncFetch = &jwtauthn.JwksAsyncFetch{}
		p.JwksSourceSpecifier = &jwtauthn.JwtProvider_RemoteJwks{RemoteJwks: rj}
	default:
		doc := j.JWKS
		if !j.HMAC.Empty() {
			var err error
			if doc, err = jwks.FromHMAC(j.HMAC.Reveal(), j.HMACAlg); err != nil {
				doc = "" // refused by the model's checks; an empty set verifies nothing
			}
		}
		p.JwksSourceSpecifier = &jwtauthn.JwtProvider_LocalJwks{LocalJwks: &core.DataSource{
			Specifier: &core.DataSource_InlineString{InlineString: doc}}}
	}
	return p
}

// jwtPerRoute picks the route's requirement, or disables the filter on a
// route of a service without JWT settings.
func jwtPerRoute(s model.Service, r model.Route) *anypb.Any {
	if s.JWT == nil {
		return mustAny(&jwtauthn.PerRouteConfig{RequirementSpecifier: &jwtauthn.PerRouteConfig_Disabled{Disabled: true}})
	}
	return mustAny(&jwtauthn.PerRouteConfig{RequirementSpecifier: &jwtauthn.PerRouteConfig_RequirementName{
		RequirementName: requirementName(s.Name, model.JWTRequired(s, r))}})
}

// claimHeadersPerRoute removes, before jwt_authn runs, the headers the
// service's claims are copied to, so a client can never send its own
// (jwt_authn sets them only from a verified token's claims). nil when the
// service maps no claims.
func claimHeadersPerRoute(s model.Service) *anypb.Any {
	if s.JWT == nil || len(s.JWT.ClaimHeaders) == 0 {
		return nil
	}
	var hs []string
	for _, h := range s.JWT.ClaimHeaders {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	hs = slices.Compact(hs)
	m := &headermutation.Mutations{}
	for _, h := range hs {
		m.RequestMutations = append(m.RequestMutations, &mutation.HeaderMutation{Action: &mutation.HeaderMutation_Remove{Remove: h}})
	}
	return mustAny(&headermutation.HeaderMutationPerRoute{Mutations: m})
}

func jwtFilter(cfg *jwtauthn.JwtAuthentication) *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: JWTFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(cfg)}}
}

func rbacFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: RBACFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&rbac.RBAC{})}}
}

func headerMutationFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: HeaderMutationFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&headermutation.HeaderMutation{})}}
}
