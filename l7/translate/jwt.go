package translate

import (
	"slices"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	headermutation "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_mutation/v3"
	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	rbac "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/tlbproject/tlb/l7/jwks"
	"github.com/tlbproject/tlb/l7/model"
)

// The HTTP filters of JWT authentication and roles, by name (the keys of
// their per-route configuration).
const (
	JWTFilter            = "envoy.filters.http.jwt_authn"
	RBACFilter           = "envoy.filters.http.rbac"
	HeaderMutationFilter = "envoy.filters.http.header_mutation"
)

// JWTPayloadKey is where jwt_authn puts a verified token's payload in the
// request's dynamic metadata (namespace JWTFilter); RBAC reads the roles
// claim there.
const JWTPayloadKey = "jwt_payload"

// RolesClaim is the claim that holds a token's roles: a string or an
// array of strings.
const RolesClaim = "roles"

// remoteJWKSTimeout bounds one fetch of a remote JWKS.
const remoteJWKSTimeout = 5e9

func hasJWT(svcs []model.Service) bool {
	return slices.ContainsFunc(svcs, func(s model.Service) bool { return s.JWT != nil })
}

func hasRoles(svcs []model.Service) bool {
	for _, s := range svcs {
		for _, r := range s.Routes {
			if r.Auth.NeedsRoles() {
				return true
			}
		}
	}
	return false
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
func jwtAuthentication(svcs []model.Service) *jwtauthn.JwtAuthentication {
	cfg := &jwtauthn.JwtAuthentication{
		Providers:      map[string]*jwtauthn.JwtProvider{},
		RequirementMap: map[string]*jwtauthn.JwtRequirement{},
	}
	for _, s := range svcs {
		if s.JWT == nil {
			continue
		}
		cfg.Providers[s.Name] = jwtProvider(s)
		cfg.RequirementMap[requirementName(s.Name, true)] = &jwtauthn.JwtRequirement{
			RequiresType: &jwtauthn.JwtRequirement_ProviderName{ProviderName: s.Name}}
		cfg.RequirementMap[requirementName(s.Name, false)] = &jwtauthn.JwtRequirement{
			RequiresType: &jwtauthn.JwtRequirement_RequiresAny{RequiresAny: &jwtauthn.JwtRequirementOrList{
				Requirements: []*jwtauthn.JwtRequirement{
					{RequiresType: &jwtauthn.JwtRequirement_ProviderName{ProviderName: s.Name}},
					{RequiresType: &jwtauthn.JwtRequirement_AllowMissingOrFailed{AllowMissingOrFailed: &emptypb.Empty{}}},
				}}}}
	}
	return cfg
}

func jwtProvider(s model.Service) *jwtauthn.JwtProvider {
	j := s.JWT
	p := &jwtauthn.JwtProvider{
		Issuer:            j.Issuer,
		Audiences:         j.Audiences,
		FromHeaders:       []*jwtauthn.JwtHeader{{Name: "Authorization", ValuePrefix: "Bearer "}},
		Forward:           !j.StripAuthorization,
		PayloadInMetadata: JWTPayloadKey,
	}
	if j.Cookie != "" {
		p.FromCookies = []string{j.Cookie}
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

func jwtFilter(cfg *jwtauthn.JwtAuthentication) *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: JWTFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(cfg)}}
}

func rbacFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: RBACFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&rbac.RBAC{})}}
}

func headerMutationFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: HeaderMutationFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&headermutation.HeaderMutation{})}}
}
