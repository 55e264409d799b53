package translate_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	headermutation "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_mutation/v3"
	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	rbac "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

const testSecret = "jwt-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz"

// jwtDir writes the filters gateway, "plain" and a JWT service "api" (on
// the guarded listener only) into a config directory and loads it, as
// l7 serve does (the secret read from its file).
func jwtDir(t *testing.T, api string) model.Resolved {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"gw.yaml": filtersGateway, "plain.yaml": filtersPlain, "api.yaml": api, "hs.key": testSecret + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, errs, err := dsl.NewDir(dir, time.Now).Load()
	if err != nil || len(errs) > 0 {
		t.Fatalf("load: %v %v", err, errs)
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatal(r.Problems)
	}
	return r
}

const jwtAPI = `kind: gateway/service/v1
name: api
group: g
hosts: [api.example.com]
listeners: [gw/guarded]
jwt:
  hmacSecretFile: hs.key
  algorithm: HS384
  cookie: cml_access
  claimMappings: {sub: x-user-id}
  stripAuthorization: true
  required: false
upstreams: [{name: u, endpoints: ["198.51.100.3:80"]}]
routes:
  - {name: admin, prefix: /admin, target: u, auth: {required: true, roles: [admin, ops], rolesAll: [staff]}}
  - {name: open, prefix: /, target: u}
`

func perRoute[T any, PT interface {
	*T
	protoMessage
}](t *testing.T, rt *route.Route, filter string) PT {
	t.Helper()
	a, ok := rt.GetTypedPerFilterConfig()[filter]
	if !ok {
		return nil
	}
	var v T
	if err := a.UnmarshalTo(PT(&v)); err != nil {
		t.Fatal(err)
	}
	return PT(&v)
}

// TestJWTAndRolesOnlyWhereAsked: the JWT service's listener runs
// header_mutation, jwt_authn and rbac before ext_authz; routes pick their
// requirement (the route's override, else the service's default); only
// routes with roles get an RBAC policy; the other service's routes there
// disable both; a listener without JWT services has none of it.
func TestJWTAndRolesOnlyWhereAsked(t *testing.T) {
	r := jwtDir(t, jwtAPI)
	hcms, rcs := gatewaySet(t, r)
	guarded := hcms["http-203.0.113.1-80"]
	if got := filterNames(guarded); !slices.Equal(got, []string{translate.HeaderMutationFilter, translate.JWTFilter, translate.RBACFilter, translate.RolesClaimFilter, "envoy.filters.http.router"}) {
		t.Fatalf("guarded filters = %v", got)
	}
	if guarded.GetLocalReplyConfig() == nil {
		t.Error("no local reply mapping of a bad roles claim to 401")
	}
	if got := filterNames(hcms["http-203.0.113.2-80"]); !slices.Equal(got, []string{"envoy.filters.http.router"}) || hcms["http-203.0.113.2-80"].GetLocalReplyConfig() != nil {
		t.Errorf("open listener filters = %v", got)
	}
	var ja jwtauthn.JwtAuthentication
	if err := guarded.GetHttpFilters()[1].GetTypedConfig().UnmarshalTo(&ja); err != nil {
		t.Fatal(err)
	}
	p, pc := ja.GetProviders()["api"], ja.GetProviders()["api"+translate.CookieProviderSuffix]
	if p == nil || pc == nil || ja.GetProviders()[translate.NoBearerProvider] == nil || len(ja.GetProviders()) != 3 {
		t.Fatalf("providers = %v", ja.GetProviders())
	}
	if p.GetForward() || len(p.GetFromCookies()) != 0 || len(p.GetFromHeaders()) != 1 ||
		p.GetFromHeaders()[0].GetValuePrefix() != "Bearer " || p.GetPayloadInMetadata() != translate.JWTPayloadKey ||
		p.GetClaimToHeaders()[0].GetHeaderName() != "x-user-id" || !strings.Contains(p.GetLocalJwks().GetInlineString(), `"alg":"HS384"`) {
		t.Errorf("header provider = %v", p)
	}
	if !slices.Equal(pc.GetFromCookies(), []string{"cml_access"}) || len(pc.GetFromHeaders()) != 0 ||
		pc.GetClaimToHeaders()[0].GetHeaderName() != "x-user-id" || pc.GetLocalJwks().GetInlineString() != p.GetLocalJwks().GetInlineString() {
		t.Errorf("cookie provider = %v", pc)
	}
	// A Bearer token wins: the cookie counts only without one.
	req := ja.GetRequirementMap()["api/required"].GetRequiresAny().GetRequirements()
	if len(req) != 2 || req[0].GetProviderName() != "api" ||
		req[1].GetRequiresAll().GetRequirements()[0].GetRequiresAny().GetRequirements()[0].GetProviderName() != translate.NoBearerProvider ||
		req[1].GetRequiresAll().GetRequirements()[0].GetRequiresAny().GetRequirements()[1].GetAllowMissing() == nil ||
		req[1].GetRequiresAll().GetRequirements()[1].GetProviderName() != "api"+translate.CookieProviderSuffix {
		t.Errorf("api/required = %v, want api, or (no Bearer token and api/cookie)", ja.GetRequirementMap()["api/required"])
	}
	opt := ja.GetRequirementMap()["api/optional"].GetRequiresAny().GetRequirements()
	if len(opt) != 3 || !proto.Equal(opt[0], req[0]) || !proto.Equal(opt[1], req[1]) || opt[2].GetAllowMissingOrFailed() == nil {
		t.Errorf("api/optional = %v, want api/required's, or anonymous", ja.GetRequirementMap()["api/optional"])
	}
	if p.GetJwtCacheConfig().GetJwtCacheSize() != translate.JWTCacheSize {
		t.Errorf("provider's JWT cache = %v, want %d verified tokens per worker", p.GetJwtCacheConfig(), translate.JWTCacheSize)
	}

	g := routesByName(rcs["http-203.0.113.1-80"])
	for name, want := range map[string]string{"api/admin": "api/required", "api/open": "api/optional"} {
		if got := perRoute[jwtauthn.PerRouteConfig](t, g[name], translate.JWTFilter); got.GetRequirementName() != want {
			t.Errorf("%s requirement = %v, want %s", name, got, want)
		}
	}
	if got := perRoute[jwtauthn.PerRouteConfig](t, g["plain/all"], translate.JWTFilter); !got.GetDisabled() {
		t.Errorf("plain/all jwt = %v, want disabled", got)
	}
	admin := perRoute[rbac.RBACPerRoute](t, g["api/admin"], translate.RBACFilter)
	ids := admin.GetRbac().GetRules().GetPolicies()["roles"].GetPrincipals()[0].GetAndIds().GetIds()
	if len(ids) != 2 || len(ids[0].GetOrIds().GetIds()) != 2 || ids[1].GetSourcedMetadata().GetMetadataMatcher().GetFilter() != translate.JWTFilter {
		t.Errorf("admin RBAC = %v, want (admin or ops) and staff", admin)
	}
	for _, n := range []string{"api/open", "plain/all"} {
		if got := perRoute[rbac.RBACPerRoute](t, g[n], translate.RBACFilter); got == nil || got.GetRbac() != nil {
			t.Errorf("%s RBAC = %v, want disabled (no rbac)", n, got)
		}
	}
	hm := perRoute[headermutation.HeaderMutationPerRoute](t, g["api/open"], translate.HeaderMutationFilter)
	if rm := hm.GetMutations().GetRequestMutations(); len(rm) != 1 || rm[0].GetRemove() != "x-user-id" {
		t.Errorf("api/open header mutation = %v, want x-user-id removed before jwt_authn", hm)
	}
	if perRoute[headermutation.HeaderMutationPerRoute](t, g["plain/all"], translate.HeaderMutationFilter) != nil {
		t.Error("plain/all removes headers it never asked about")
	}
	for n, rt := range routesByName(rcs["http-203.0.113.2-80"]) {
		if rt.GetTypedPerFilterConfig() != nil {
			t.Errorf("%s on the open listener carries per-filter config", n)
		}
	}
}

// TestRequiredDefaultAndOverride: the service's required is the default,
// a route's auth.required overrides it either way.
func TestRequiredDefaultAndOverride(t *testing.T) {
	api := strings.Replace(jwtAPI, "  required: false\n", "", 1) // default: required
	api = strings.Replace(api, "auth: {required: true, roles: [admin, ops], rolesAll: [staff]}", "auth: {required: false}", 1)
	_, rcs := gatewaySet(t, jwtDir(t, api))
	g := routesByName(rcs["http-203.0.113.1-80"])
	for name, want := range map[string]string{"api/admin": "api/optional", "api/open": "api/required"} {
		if got := perRoute[jwtauthn.PerRouteConfig](t, g[name], translate.JWTFilter); got.GetRequirementName() != want {
			t.Errorf("%s requirement = %v, want %s", name, got, want)
		}
	}
}

// TestPayloadInMetadataOnlyForRoles: a provider puts the verified payload
// into the request's metadata only when a route of its service checks
// roles there (RBAC reads it); otherwise Envoy would copy every token's
// claims into each request for nothing.
func TestPayloadInMetadataOnlyForRoles(t *testing.T) {
	noRoles := strings.Replace(jwtAPI, "auth: {required: true, roles: [admin, ops], rolesAll: [staff]}", "auth: {required: true}", 1)
	for name, c := range map[string]struct {
		api  string
		want string
	}{"roles": {jwtAPI, translate.JWTPayloadKey}, "no roles": {noRoles, ""}} {
		hcms, _ := gatewaySet(t, jwtDir(t, c.api))
		var ja jwtauthn.JwtAuthentication
		for _, f := range hcms["http-203.0.113.1-80"].GetHttpFilters() {
			if f.GetName() == translate.JWTFilter {
				if err := f.GetTypedConfig().UnmarshalTo(&ja); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := ja.GetProviders()["api"].GetPayloadInMetadata(); got != c.want {
			t.Errorf("%s: payload_in_metadata = %q, want %q", name, got, c.want)
		}
	}
}

// TestHMACSecretNeverRendered: the secret reaches Envoy's config, but
// neither rendered YAML nor the model's formatting shows it.
func TestHMACSecretNeverRendered(t *testing.T) {
	r := jwtDir(t, jwtAPI)
	set := translate.Group(r, "g", translate.Gateway)
	y, err := translate.ResourcesYAML(set)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := translate.StaticBootstrap(set)
	by, err := translate.YAML(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Config.Services {
		if s.JWT != nil {
			for _, out := range []string{string(y), string(by), fmtService(s)} {
				if strings.Contains(out, testSecret) || strings.Contains(out, b64url(testSecret)) {
					t.Fatal("the HMAC secret is in rendered output")
				}
			}
		}
	}
	if len(set[resource.ListenerType]) == 0 {
		t.Fatal("no listeners")
	}
}

type protoMessage interface {
	ProtoReflect() protoreflect.Message
}

func fmtService(s model.Service) string { return fmt.Sprintf("%v %+v %#v", s, s, s.JWT) }

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
