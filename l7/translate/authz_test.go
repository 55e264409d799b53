package translate_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthz "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// filtersConfig: listener "guarded" serves a service with interceptors on
// one route ("app") and a service without ("plain"); listener "open"
// serves only "plain"; "tls" is HTTPS with "app"; "web" redirects.
const filtersGateway = `kind: gateway/gateway/v1
name: gw
group: g
listeners:
  - {name: guarded, vip: 203.0.113.1, port: 80, protocol: HTTP}
  - {name: open, vip: 203.0.113.2, port: 80, protocol: HTTP}
  - {name: web, vip: 203.0.113.3, port: 80, protocol: HTTP, redirectHTTPS: true}
`

const filtersApp = `kind: gateway/service/v1
name: app
group: g
hosts: [app.example.com]
listeners: [gw/guarded]
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - name: private
    prefix: /private
    target: u
    interceptors:
      - {type: sessionInterceptor, cookie: sid}
      - {type: csrfInterceptor}
  - name: public
    prefix: /
    target: u
`

const filtersPlain = `kind: gateway/service/v1
name: plain
group: g
hosts: [plain.example.com]
listeners: [gw/guarded, gw/open]
upstreams: [{name: u, endpoints: ["198.51.100.2:80"]}]
routes:
  - {name: all, prefix: /, target: u}
`

func resolveDocs(t *testing.T, docs ...string) model.Resolved {
	t.Helper()
	r := resolve(t, parseDocs(t, docs...), model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	return r
}

// parseDocs parses DSL documents (named doca.yaml, docb.yaml, ...) into
// one config.
func parseDocs(t *testing.T, docs ...string) model.Config {
	t.Helper()
	var cfg model.Config
	for i, src := range docs {
		d, err := dsl.Parse("doc"+string(rune('a'+i))+".yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if d.Service != nil {
			cfg.Services = append(cfg.Services, *d.Service)
		}
		if d.Gateway != nil {
			cfg.Gateways = append(cfg.Gateways, *d.Gateway)
		}
	}
	return cfg
}

// gatewaySet translates group g twice, without and with the Cache, checks
// both are equal and valid, and returns the listeners' connection managers
// and route configurations by listener name.
func gatewaySet(t *testing.T, r model.Resolved) (map[string]*hcm.HttpConnectionManager, map[string]*route.RouteConfiguration) {
	t.Helper()
	set := translate.Group(r, "g", translate.Gateway)
	if err := validate.Set(set); err != nil {
		t.Fatalf("ValidateAll: %v", err)
	}
	c := translate.NewCache()
	cached := c.ForKind(r, "g", translate.Gateway, c.Shared(r, "g"))
	for typ := range set {
		if len(set[typ]) != len(cached[typ]) {
			t.Fatalf("%s: cache built %d, plain %d", typ, len(cached[typ]), len(set[typ]))
		}
		for i := range set[typ] {
			if !proto.Equal(set[typ][i], cached[typ][i]) {
				t.Errorf("%s[%d]: the cache builds something else", typ, i)
			}
		}
	}
	hcms := map[string]*hcm.HttpConnectionManager{}
	for _, res := range set[resource.ListenerType] {
		l := res.(*listener.Listener)
		var m hcm.HttpConnectionManager
		if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&m); err != nil {
			t.Fatalf("%s: %v", l.GetName(), err)
		}
		hcms[l.GetName()] = &m
	}
	rcs := map[string]*route.RouteConfiguration{}
	for _, res := range set[resource.RouteType] {
		rc := res.(*route.RouteConfiguration)
		rcs[rc.GetName()] = rc
	}
	return hcms, rcs
}

func filterNames(m *hcm.HttpConnectionManager) []string {
	var out []string
	for _, f := range m.GetHttpFilters() {
		out = append(out, f.GetName())
	}
	return out
}

func routesByName(rc *route.RouteConfiguration) map[string]*route.Route {
	out := map[string]*route.Route{}
	for _, vh := range rc.GetVirtualHosts() {
		for _, rt := range vh.GetRoutes() {
			out[rt.GetName()] = rt
		}
	}
	return out
}

func authzOf(t *testing.T, rt *route.Route) *extauthz.ExtAuthzPerRoute {
	t.Helper()
	a, ok := rt.GetTypedPerFilterConfig()[translate.ExtAuthzFilter]
	if !ok {
		return nil
	}
	var pr extauthz.ExtAuthzPerRoute
	if err := a.UnmarshalTo(&pr); err != nil {
		t.Fatal(err)
	}
	return &pr
}

// TestExtAuthzOnlyWhereAsked: the ext_authz filter is on the listeners
// that serve a route with interceptors and on no other; there, a route
// with interceptors carries its chain and every other route disables the
// filter; elsewhere routes carry no ext_authz configuration at all.
func TestExtAuthzOnlyWhereAsked(t *testing.T) {
	r := resolveDocs(t, filtersGateway, filtersApp, filtersPlain)
	hcms, rcs := gatewaySet(t, r)

	guarded, open := hcms["http-203.0.113.1-80"], hcms["http-203.0.113.2-80"]
	if got := filterNames(guarded); !slices.Equal(got, []string{translate.ExtAuthzFilter, "envoy.filters.http.router"}) {
		t.Fatalf("guarded listener filters = %v", got)
	}
	var ea extauthz.ExtAuthz
	if err := guarded.GetHttpFilters()[0].GetTypedConfig().UnmarshalTo(&ea); err != nil {
		t.Fatal(err)
	}
	if ea.GetGrpcService().GetEnvoyGrpc().GetClusterName() != translate.AuthzCluster ||
		ea.GetTransportApiVersion().String() != "V3" || ea.GetFailureModeAllow() ||
		ea.GetStatusOnError().GetCode() != 503 {
		t.Errorf("ext_authz = %v", &ea)
	}
	for name, m := range map[string]*hcm.HttpConnectionManager{"open": open, "redirect": hcms["http-203.0.113.3-80"]} {
		if got := filterNames(m); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
			t.Errorf("%s listener filters = %v, want the router only", name, got)
		}
	}

	g := routesByName(rcs["http-203.0.113.1-80"])
	priv := authzOf(t, g["app/private"])
	want, _ := chain.Encode(chain.Chain{{Type: chain.TypeSession, Cookie: "sid"}, {Type: chain.TypeCSRF}})
	wantChain, _ := chain.Decode(want) // with the defaults filled in
	got, err := chain.Decode(priv.GetCheckSettings().GetContextExtensions()[chain.Key])
	if err != nil || !reflect.DeepEqual(got, wantChain) || priv.GetDisabled() {
		t.Errorf("app/private ext_authz = %v (%v), want the chain %s", priv, err, want)
	}
	for _, n := range []string{"app/public", "plain/all"} {
		if pr := authzOf(t, g[n]); pr == nil || !pr.GetDisabled() {
			t.Errorf("%s on the guarded listener: ext_authz = %v, want disabled", n, pr)
		}
	}
	for n, rt := range routesByName(rcs["http-203.0.113.2-80"]) {
		if rt.GetTypedPerFilterConfig() != nil {
			t.Errorf("%s on the open listener carries per-filter config %v", n, rt.GetTypedPerFilterConfig())
		}
	}
	for _, res := range translate.Group(r, "g", translate.GRPC)[resource.RouteType] {
		for n, rt := range routesByName(res.(*route.RouteConfiguration)) {
			if rt.GetTypedPerFilterConfig() != nil {
				t.Errorf("proxyless route %s carries per-filter config", n)
			}
		}
	}
}

// TestNoInterceptorsNoFilter: without interceptors anywhere nothing
// changes: no filter, no per-route configuration, no authz cluster in the
// static bootstrap.
func TestNoInterceptorsNoFilter(t *testing.T) {
	r := resolveDocs(t, filtersGateway, filtersPlain)
	hcms, rcs := gatewaySet(t, r)
	for n, m := range hcms {
		if got := filterNames(m); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
			t.Errorf("%s: filters %v", n, got)
		}
	}
	for _, rc := range rcs {
		for n, rt := range routesByName(rc) {
			if rt.GetTypedPerFilterConfig() != nil {
				t.Errorf("%s carries per-filter config", n)
			}
		}
	}
	b, err := translate.StaticBootstrap(translate.Group(r, "g", translate.Gateway))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b.GetStaticResources().GetClusters() {
		if c.GetName() == translate.AuthzCluster {
			t.Error("static bootstrap has the authz cluster with no interceptors")
		}
	}
}

// TestChangingAChainKeepsTheListener: changing a route's interceptors (not
// whether there are any) leaves the listener's bytes alone, so it is not
// drained; only the route configuration changes.
func TestChangingAChainKeepsTheListener(t *testing.T) {
	a := translate.Listeners(resolveDocs(t, filtersGateway, filtersApp, filtersPlain), "g")
	b := translate.Listeners(resolveDocs(t, filtersGateway, filtersPlain,
		strings.Replace(filtersApp, "cookie: sid", "cookie: other, timeout: 2s", 1)), "g")
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			t.Errorf("listener %s changed with a route's chain", a[i].GetName())
		}
	}
}

// TestBasicAuthScopedToItsRoutes is seed 000's incident as a test:
// basicAuth on the technical routes of one service reaches exactly those
// routes. Every other route of the same listener disables ext_authz (so
// Envoy never asks), the other listener has no ext_authz filter at all,
// and the same config without basicAuth has no ext_authz anywhere.
func TestBasicAuthScopedToItsRoutes(t *testing.T) {
	tech := `kind: gateway/service/v1
name: tech
group: g
hosts: [app.example.com]
listeners: [gw/guarded]
upstreams: [{name: u, endpoints: ["198.51.100.4:80"]}]
routes:
  - name: metrics
    prefix: /metrics
    target: u
    interceptors: [{type: basicAuth, usersFile: /etc/tlb/basic-auth/ops/htpasswd, realm: ops}]
  - {name: page, prefix: /page, target: u}
`
	plainApp := strings.Replace(filtersApp, "    interceptors:\n      - {type: sessionInterceptor, cookie: sid}\n      - {type: csrfInterceptor}\n", "", 1)
	hcms, rcs := gatewaySet(t, resolveDocs(t, filtersGateway, plainApp, filtersPlain, tech))
	g := routesByName(rcs["http-203.0.113.1-80"])
	m := authzOf(t, g["tech/metrics"]).GetCheckSettings().GetContextExtensions()[chain.Key]
	c, err := chain.Decode(m)
	if err != nil || len(c) != 1 || c[0].Type != chain.TypeBasicAuth || c[0].Realm != "ops" {
		t.Fatalf("tech/metrics chain %q (%v)", m, err)
	}
	for name, rt := range g {
		if name == "tech/metrics" {
			continue
		}
		if pr := authzOf(t, rt); pr == nil || !pr.GetDisabled() || pr.GetCheckSettings() != nil {
			t.Errorf("%s: ext_authz %v, want disabled: basicAuth must not reach it", name, pr)
		}
	}
	if got := filterNames(hcms["http-203.0.113.2-80"]); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
		t.Errorf("other listener filters = %v", got)
	}
	hcms, _ = gatewaySet(t, resolveDocs(t, filtersGateway, plainApp, filtersPlain))
	for n, m := range hcms {
		if slices.Contains(filterNames(m), translate.ExtAuthzFilter) {
			t.Errorf("%s has ext_authz with no interceptor anywhere", n)
		}
	}
}
