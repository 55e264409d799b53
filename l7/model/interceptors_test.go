package model_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
)

// catalog declares an interceptor endpoint for team-a only, a REST one
// and an htpasswd file for everyone, in group edge.
func catalog() model.InterceptorCatalog {
	return model.InterceptorCatalog{Name: "shared", Group: "edge", Origin: "interceptors.yaml",
		External: []model.ExternalEndpoint{
			{Name: "audit", Transport: chain.TransportGRPC, Address: "10.0.0.5:8081", Namespaces: []string{"team-a"}},
			{Name: "rest", Transport: chain.TransportREST, URL: "https://authz.internal/check", Namespaces: []string{"*"}},
		},
		UsersFiles: []model.UsersFile{{Name: "ops", Path: "/etc/tlb/basic-auth/ops/htpasswd", Namespaces: []string{"*"}}},
	}
}

func tenantService(ns, name string, c chain.Chain) model.Service {
	return model.Service{Name: ns + "." + name, Group: "edge", Namespace: ns, Origin: model.Origin(ns + "/" + name),
		Created: time.Unix(1000, 0), Hosts: []string{name + "." + ns + ".example.com"},
		Upstreams: []model.Upstream{{Name: "http", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("10.1.0.1:80"), Weight: 1}}}},
		Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "http", Weight: 1}}, Interceptors: c}}}
}

// TestTenantChainsNameOnlyDeclarations: a chain from a Kubernetes object
// may name interceptor endpoints and htpasswd files only by the names the
// operator declared for its namespace; Resolve puts the declared address,
// URL or path in their place. An address, URL or path of its own, an
// unknown name or one declared for other namespaces rejects the service
// (issue 22 item 4: the tlb.io/l7-interceptors annotation made l7 POST
// requests with their Authorization and Cookie anywhere, and open any file
// as an htpasswd file). The operator's DSL services keep naming endpoints
// directly.
func TestTenantChainsNameOnlyDeclarations(t *testing.T) {
	ext := func(endpoint string) chain.Interceptor {
		return chain.Interceptor{Type: chain.TypeExternal, ID: "authz", Endpoint: endpoint, Timeout: chain.Duration(chain.DefaultTimeout)}
	}
	cases := map[string]struct {
		svc     model.Service
		problem string // "" when served
		check   func(t *testing.T, c chain.Chain)
	}{
		"declared endpoint, own namespace": {svc: tenantService("team-a", "app", chain.Chain{ext("audit")}),
			check: func(t *testing.T, c chain.Chain) {
				if c[0].Transport != chain.TransportGRPC || c[0].Address != "10.0.0.5:8081" || c[0].Endpoint != "" {
					t.Errorf("resolved to %+v, want grpc 10.0.0.5:8081", c[0])
				}
			}},
		"declared for every namespace": {svc: tenantService("team-b", "app", chain.Chain{ext("rest"),
			{Type: chain.TypeBasicAuth, Users: "ops", Realm: "ops"}}),
			check: func(t *testing.T, c chain.Chain) {
				if c[0].URL != "https://authz.internal/check" || c[1].UsersFile != "/etc/tlb/basic-auth/ops/htpasswd" || c[1].Users != "" {
					t.Errorf("resolved to %+v", c)
				}
			}},
		"declared for another namespace": {svc: tenantService("team-b", "app", chain.Chain{ext("audit")}),
			problem: `routes[0].interceptors[0].endpoint: interceptor endpoint "audit" is not declared for namespace "team-b"`},
		"unknown endpoint": {svc: tenantService("team-a", "app", chain.Chain{ext("nope")}),
			problem: `routes[0].interceptors[0].endpoint: no interceptor endpoint "nope"`},
		"own URL": {svc: tenantService("team-a", "app", chain.Chain{{Type: chain.TypeExternal, ID: "x", Transport: chain.TransportREST, URL: "http://169.254.169.254/latest"}}),
			problem: "routes[0].interceptors[0].url: a Kubernetes object may not name where an interceptor is"},
		"own address": {svc: tenantService("team-a", "app", chain.Chain{{Type: chain.TypeExternal, ID: "x", Transport: chain.TransportGRPC, Address: "10.9.9.9:1"}}),
			problem: "routes[0].interceptors[0].address: a Kubernetes object may not name where an interceptor is"},
		"own htpasswd path": {svc: tenantService("team-a", "app", chain.Chain{{Type: chain.TypeBasicAuth, UsersFile: "/dev/zero"}}),
			problem: "routes[0].interceptors[0].usersFile: a Kubernetes object may not name a file"},
		"unknown users": {svc: tenantService("team-a", "app", chain.Chain{{Type: chain.TypeBasicAuth, Users: "root"}}),
			problem: `routes[0].interceptors[0].users: no htpasswd file "root"`},
		"operator's own address": {svc: func() model.Service {
			s := tenantService("", "dsl", chain.Chain{{Type: chain.TypeExternal, ID: "x", Transport: chain.TransportGRPC, Address: "10.9.9.9:1"}})
			s.Name, s.Origin, s.Hosts = "dsl", "dsl.yaml", []string{"dsl.example.com"}
			return s
		}(), check: func(t *testing.T, c chain.Chain) {
			if c[0].Address != "10.9.9.9:1" {
				t.Errorf("the DSL's address changed: %+v", c[0])
			}
		}},
		"operator names a declaration of team-a": {svc: func() model.Service {
			s := tenantService("", "dsl", chain.Chain{ext("audit")})
			s.Name, s.Origin, s.Hosts = "dsl", "dsl.yaml", []string{"dsl.example.com"}
			return s
		}(), check: func(t *testing.T, c chain.Chain) {
			if c[0].Address != "10.0.0.5:8081" {
				t.Errorf("resolved to %+v", c[0])
			}
		}},
		"another group's declaration": {svc: func() model.Service {
			s := tenantService("team-a", "app", chain.Chain{ext("audit")})
			s.Group = "other"
			return s
		}(), problem: `no interceptor endpoint "audit" is declared for group "other"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := model.Resolve(model.Config{Services: []model.Service{tc.svc}, Interceptors: []model.InterceptorCatalog{catalog()}}, model.Options{})
			if tc.problem != "" {
				if len(r.Config.Services) != 0 || len(r.Problems) == 0 || !strings.Contains(r.Problems[0].Error(), tc.problem) {
					t.Fatalf("served %d, problems %v; want rejected with %q", len(r.Config.Services), r.Problems, tc.problem)
				}
				return
			}
			if len(r.Problems) != 0 || len(r.Config.Services) != 1 {
				t.Fatalf("problems %v, want the service served", r.Problems)
			}
			tc.check(t, r.Config.Services[0].Routes[0].Interceptors)
			if tc.svc.Routes[0].Interceptors[0].Address != "" && tc.svc.Namespace != "" {
				t.Error("Resolve changed its input")
			}
		})
	}
}

// TestCatalogChecks: a bad declaration is refused whole, naming the file
// and the field; a name declared twice in a group keeps the first.
func TestCatalogChecks(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(c *model.InterceptorCatalog)
		want string
	}{
		"bad name":        {func(c *model.InterceptorCatalog) { c.External[0].Name = "Audit" }, "external[0].name"},
		"twice":           {func(c *model.InterceptorCatalog) { c.External[1].Name = "audit" }, `external[1].name: "audit" declared twice`},
		"no address":      {func(c *model.InterceptorCatalog) { c.External[0].Address = "" }, "external[0].address"},
		"url scheme":      {func(c *model.InterceptorCatalog) { c.External[1].URL = "file:///etc/passwd" }, "external[1].url"},
		"relative path":   {func(c *model.InterceptorCatalog) { c.UsersFiles[0].Path = "htpasswd" }, "basicAuth[0].usersFile"},
		"bad namespace":   {func(c *model.InterceptorCatalog) { c.UsersFiles[0].Namespaces = []string{"Team A"} }, "basicAuth[0].namespaces[0]"},
		"bad transport":   {func(c *model.InterceptorCatalog) { c.External[0].Transport = "soap" }, "external[0].transport"},
		"catalog name":    {func(c *model.InterceptorCatalog) { c.Name = "" }, "name"},
		"grpc with a url": {func(c *model.InterceptorCatalog) { c.External[0].URL = "http://a/" }, "external[0].url"},
	} {
		t.Run(name, func(t *testing.T) {
			c := catalog()
			tc.edit(&c)
			r := model.Resolve(model.Config{Interceptors: []model.InterceptorCatalog{c}}, model.Options{})
			if len(r.Config.Interceptors) != 0 || len(r.Problems) == 0 || !strings.HasPrefix(r.Problems[0].Error(), `interceptors.yaml: interceptors "`+c.Name+`": `+tc.want) {
				t.Fatalf("accepted %d, problems %v; want %q", len(r.Config.Interceptors), r.Problems, tc.want)
			}
		})
	}
	a, b := catalog(), catalog()
	b.Name, b.Origin = "again", "zz.yaml"
	r := model.Resolve(model.Config{Interceptors: []model.InterceptorCatalog{b, a}}, model.Options{})
	if len(r.Config.Interceptors) != 1 || r.Config.Interceptors[0].Origin != "interceptors.yaml" ||
		len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Error(), "declared by another catalog") {
		t.Errorf("two catalogs declaring audit: kept %v, problems %v; want the first by origin", r.Config.Interceptors, r.Problems)
	}
}

// TestIdentityHeadersTheGatewayMaySet: a claim mapping (or a session
// header) may not target a header Envoy manages (host, hop-by-hop,
// framing, x-envoy-*) or one clients send for their own purposes (cookie,
// authorization): identity headers are removed from every request of the
// listener (issue 22 item 6: claim mappings to host, transfer-encoding
// and cookie were accepted).
func TestIdentityHeadersTheGatewayMaySet(t *testing.T) {
	for _, h := range []string{"host", "transfer-encoding", "cookie", "authorization", "content-length", "connection", "te",
		"x-envoy-original-path", "x-forwarded-for", "x-request-id", "upgrade"} {
		s := tenantService(model.Operator, "api", nil)
		s.Name, s.Hosts = "api", []string{"api.example.com"}
		s.JWT = &model.JWT{HMAC: model.NewPrivateKey([]byte(strings.Repeat("k", 32))), HMACAlg: "HS256", ClaimHeaders: map[string]string{"sub": h}, Required: true}
		if err := model.CheckService(s); err == nil || !strings.Contains(err.Error(), "jwt.claimMappings.sub") {
			t.Errorf("claim mapped to %s: %v, want refused", h, err)
		}
		s.JWT = nil
		s.Routes[0].Interceptors = chain.Chain{{Type: chain.TypeSession, Headers: map[string]string{"user": h}}}
		if err := model.CheckService(s); err == nil || !strings.Contains(err.Error(), "interceptors[0].headers.user") {
			t.Errorf("session field mapped to %s: %v, want refused", h, err)
		}
	}
	s := tenantService(model.Operator, "api", chain.Chain{{Type: chain.TypeSession, Headers: map[string]string{"user": "x-user-id"}}})
	s.Name, s.Hosts = "api", []string{"api.example.com"}
	s.JWT = &model.JWT{HMAC: model.NewPrivateKey([]byte(strings.Repeat("k", 32))), HMACAlg: "HS256", ClaimHeaders: map[string]string{"sub": "x-user-sub"}, Required: true}
	if err := model.CheckService(s); err != nil {
		t.Errorf("x-user-id and x-user-sub refused: %v", err)
	}
}
