package translate_test

import (
	"net/netip"
	"slices"
	"testing"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// gatewayAPIModel uses every model field Gateway API brought: exact,
// method, query and header regex matches, weights of 0, redirects, URL
// rewrites, mirrors, and a TLS passthrough listener. A second group's
// service and passthrough listener must not leak into group "g".
func gatewayAPIModel(t *testing.T) model.Resolved {
	t.Helper()
	vip := netip.MustParseAddr("203.0.113.40")
	ep := func(a string) []model.Endpoint {
		return []model.Endpoint{{Addr: netip.MustParseAddrPort(a), Weight: 1}}
	}
	web := model.Service{Name: "web", Group: "g", Origin: "web", Hosts: []string{"web.example.com"},
		Listeners: []model.ListenerRef{{Gateway: "gw", Listener: "http"}},
		Upstreams: []model.Upstream{{Name: "v1", Endpoints: ep("198.51.100.1:80")}, {Name: "v2", Endpoints: ep("198.51.100.2:80")}, {Name: "shadow", Endpoints: ep("198.51.100.3:80")}},
		Routes: []model.Route{
			{Name: "api", Prefix: "/api", Method: "GET",
				Headers:    []model.HeaderMatch{{Name: "x-version", Regex: "^v[12]$"}},
				Queries:    []model.QueryMatch{{Name: "debug", Exact: "1"}, {Name: "id", Regex: "^[0-9]+$"}},
				Targets:    []model.WeightedTarget{{Upstream: "v1", Weight: 0}, {Upstream: "v2", Weight: 1}},
				URLRewrite: &model.URLRewrite{Hostname: "api.internal", Path: &model.PathModifier{IsPrefix: true, ReplacePrefix: "/v2"}},
				Mirrors:    []model.Mirror{{Upstream: "shadow", Percent: 25}, {Upstream: "v1"}}},
			{Name: "strip", Prefix: "/strip/", Targets: []model.WeightedTarget{{Upstream: "v1"}},
				URLRewrite: &model.URLRewrite{Path: &model.PathModifier{IsPrefix: true, ReplacePrefix: "/"}}},
			{Name: "full", Exact: "/status", Targets: []model.WeightedTarget{{Upstream: "v1"}},
				URLRewrite: &model.URLRewrite{Path: &model.PathModifier{Full: "/healthz"}}},
			{Name: "old", Exact: "/old", Redirect: &model.Redirect{Scheme: "https", Hostname: "new.example.com", Port: 8443, StatusCode: 301, Path: &model.PathModifier{Full: "/new"}}},
			{Name: "moved", Prefix: "/moved", Redirect: &model.Redirect{Path: &model.PathModifier{IsPrefix: true, ReplacePrefix: "/here"}}},
			{Name: "off", Prefix: "/off", Targets: []model.WeightedTarget{{Upstream: "v1"}, {Upstream: "v2"}}},
			{Name: "partial", Prefix: "/partial", Targets: []model.WeightedTarget{{Upstream: "v1", Weight: 3}}, FailedWeight: 1},
			{Name: "root", Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "v1", Weight: 1}}},
		}}
	db := model.Service{Name: "db", Group: "g", Origin: "db", Hosts: []string{"db.example.com"},
		Upstreams: []model.Upstream{{Name: "a", Endpoints: ep("198.51.100.10:5432")}, {Name: "b", Endpoints: ep("198.51.100.11:5432")}},
		Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "a"}}}}}
	other := model.Service{Name: "other", Group: "h", Origin: "other", Hosts: []string{"other.example.com"},
		Upstreams: []model.Upstream{{Name: "x", Endpoints: ep("198.51.100.20:443")}},
		Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "x"}}}}}
	cfg := model.Config{
		Gateways: []model.Gateway{
			{Name: "gw", Group: "g", Origin: "gw", Listeners: []model.Listener{
				{Name: "http", VIP: vip, Port: 80, Protocol: model.HTTP},
				{Name: "tls", VIP: vip, Port: 443, Protocol: model.TLS, Passthrough: []model.SNITarget{
					{ServerNames: []string{"db.example.com", "*.db.example.com"}, Targets: []model.WeightedCluster{{Cluster: "db/a", Weight: 3}, {Cluster: "db/b", Weight: 1}}},
					{ServerNames: []string{"a.example.com"}, Targets: []model.WeightedCluster{{Cluster: "db/a", Weight: 1}, {Cluster: "db/b", Weight: 0}}},
					{Targets: []model.WeightedCluster{{Cluster: "db/b"}}},
				}},
			}},
			{Name: "gh", Group: "h", Origin: "gh", Listeners: []model.Listener{
				{Name: "tls", VIP: netip.MustParseAddr("203.0.113.41"), Port: 443, Protocol: model.TLS, Passthrough: []model.SNITarget{
					{ServerNames: []string{"other.example.com"}, Targets: []model.WeightedCluster{{Cluster: "other/x"}}},
				}},
			}},
		},
		Services: []model.Service{web, db, other},
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	return r
}

func gatewayAPIRoutes(t *testing.T, r model.Resolved) map[string]*route.Route {
	t.Helper()
	out := map[string]*route.Route{}
	for _, rc := range translate.ListenerRoutes(r, "g") {
		for _, vh := range rc.GetVirtualHosts() {
			for _, rt := range vh.GetRoutes() {
				out[rt.GetName()] = rt
			}
		}
	}
	return out
}

// TestGatewayAPIRouteFields: each field reaches its Envoy field.
func TestGatewayAPIRouteFields(t *testing.T) {
	r := gatewayAPIModel(t)
	rs := gatewayAPIRoutes(t, r)

	api := rs["web/api"]
	m := api.GetMatch()
	if m.GetPrefix() != "/api" || len(m.GetHeaders()) != 2 ||
		m.GetHeaders()[0].GetName() != ":method" || m.GetHeaders()[0].GetStringMatch().GetExact() != "GET" ||
		m.GetHeaders()[1].GetStringMatch().GetSafeRegex().GetRegex() != "^v[12]$" {
		t.Errorf("api match = %v", m)
	}
	if q := m.GetQueryParameters(); len(q) != 2 || q[0].GetName() != "debug" || q[0].GetStringMatch().GetExact() != "1" ||
		q[1].GetName() != "id" || q[1].GetStringMatch().GetSafeRegex().GetRegex() != "^[0-9]+$" {
		t.Errorf("api query parameters = %v", q)
	}
	a := api.GetRoute()
	if a.GetCluster() != "web/v2" {
		t.Errorf("api cluster = %v; the weight-0 target must be dropped, leaving web/v2", a.GetClusterSpecifier())
	}
	if a.GetHostRewriteLiteral() != "api.internal" || a.GetPrefixRewrite() != "/v2" {
		t.Errorf("api rewrite: host %q prefix %q", a.GetHostRewriteLiteral(), a.GetPrefixRewrite())
	}
	mp := a.GetRequestMirrorPolicies()
	if len(mp) != 2 || mp[0].GetCluster() != "web/shadow" || mp[0].GetRuntimeFraction().GetDefaultValue().GetNumerator() != 25 ||
		mp[0].GetRuntimeFraction().GetDefaultValue().GetDenominator() != typev3.FractionalPercent_HUNDRED ||
		mp[1].GetCluster() != "web/v1" || mp[1].GetRuntimeFraction().GetDefaultValue().GetNumerator() != 100 {
		t.Errorf("api mirrors = %v", mp)
	}

	if rw := rs["web/strip"].GetRoute().GetRegexRewrite(); rw.GetPattern().GetRegex() != "^/strip/*" || rw.GetSubstitution() != "/" {
		t.Errorf("strip: regex rewrite %v, want ^/strip/* -> /", rw)
	}
	full := rs["web/full"]
	if full.GetMatch().GetPath() != "/status" || full.GetRoute().GetRegexRewrite().GetSubstitution() != "/healthz" {
		t.Errorf("full: match %v rewrite %v", full.GetMatch(), full.GetRoute().GetRegexRewrite())
	}

	old := rs["web/old"].GetRedirect()
	if old.GetSchemeRedirect() != "https" || old.GetHostRedirect() != "new.example.com" || old.GetPortRedirect() != 8443 ||
		old.GetPathRedirect() != "/new" || old.GetResponseCode() != route.RedirectAction_MOVED_PERMANENTLY {
		t.Errorf("old redirect = %v", old)
	}
	if mv := rs["web/moved"].GetRedirect(); mv.GetPrefixRewrite() != "/here" || mv.GetResponseCode() != route.RedirectAction_FOUND {
		t.Errorf("moved redirect = %v", mv)
	}
	// A quarter of /partial went to a backend that could not be resolved:
	// that share goes to the cluster no resource defines, answered 500.
	pa := rs["web/partial"].GetRoute()
	wcs := pa.GetWeightedClusters().GetClusters()
	if len(wcs) != 2 || wcs[0].GetName() != model.ClusterName("web", "v1") || wcs[0].GetWeight().GetValue() != 3 ||
		wcs[1].GetName() != model.FailedBackendCluster || wcs[1].GetWeight().GetValue() != 1 ||
		pa.GetClusterNotFoundResponseCode() != route.RouteAction_INTERNAL_SERVER_ERROR {
		t.Errorf("partial: weighted clusters %v, cluster_not_found %v; want web/v1 3 and %s 1 answered 500", wcs, pa.GetClusterNotFoundResponseCode(), model.FailedBackendCluster)
	}
	if rs["web/root"].GetRoute().GetClusterNotFoundResponseCode() != route.RouteAction_SERVICE_UNAVAILABLE {
		t.Errorf("root: cluster_not_found %v; only a route with a failed weight sets it", rs["web/root"].GetRoute().GetClusterNotFoundResponseCode())
	}
	if d := rs["web/off"].GetDirectResponse(); d.GetStatus() != 500 {
		t.Errorf("off: every target weighs 0, want a direct 500, got %v", rs["web/off"].GetAction())
	}
}

// TestGatewayAPIRouteOrder: an exact path goes before every prefix, a
// route with a method before the same path without one.
func TestGatewayAPIRouteOrder(t *testing.T) {
	r := gatewayAPIModel(t)
	var names []string
	for _, rc := range translate.ListenerRoutes(r, "g") {
		for _, vh := range rc.GetVirtualHosts() {
			for _, rt := range vh.GetRoutes() {
				names = append(names, rt.GetName())
			}
		}
	}
	pos := map[string]int{}
	for i, n := range names {
		pos[n] = i
	}
	if pos["web/full"] > pos["web/strip"] || pos["web/old"] > pos["web/api"] || pos["web/root"] != len(names)-1 {
		t.Errorf("route order %v: exact paths first, the catch-all prefix last", names)
	}
}

// TestPassthroughListener: a TLS listener inspects SNI and forwards each
// entry's names to its weighted clusters with tcp_proxy, terminating
// nothing; only its own group's clusters appear, and no secret is sent.
func TestPassthroughListener(t *testing.T) {
	r := gatewayAPIModel(t)
	set := translate.Group(r, "g", translate.Gateway)
	var tl *listener.Listener
	for _, res := range set[resource.ListenerType] {
		if l := res.(*listener.Listener); l.GetName() == "tls-203.0.113.40-443" {
			tl = l
		}
	}
	if tl == nil {
		t.Fatalf("no TLS listener among %d", len(set[resource.ListenerType]))
	}
	if len(tl.GetListenerFilters()) != 1 || tl.GetListenerFilters()[0].GetName() != "envoy.filters.listener.tls_inspector" {
		t.Errorf("listener filters = %v, want tls_inspector", tl.GetListenerFilters())
	}
	fcs := tl.GetFilterChains()
	if len(fcs) != 3 {
		t.Fatalf("filter chains = %d, want 3", len(fcs))
	}
	proxy := func(fc *listener.FilterChain) *tcpproxy.TcpProxy {
		tp := &tcpproxy.TcpProxy{}
		if err := fc.GetFilters()[0].GetTypedConfig().UnmarshalTo(tp); err != nil {
			t.Fatal(err)
		}
		if fc.GetTransportSocket() != nil {
			t.Errorf("chain %s terminates TLS", fc.GetName())
		}
		return tp
	}
	if sn := fcs[0].GetFilterChainMatch().GetServerNames(); len(sn) != 1 || sn[0] != "a.example.com" {
		t.Errorf("chain 0 server names %v", sn)
	}
	if tp := proxy(fcs[0]); tp.GetCluster() != "db/a" {
		t.Errorf("a.example.com -> %v, want db/a alone (db/b weighs 0)", tp.GetClusterSpecifier())
	}
	wc := proxy(fcs[1]).GetWeightedClusters().GetClusters()
	if sn := fcs[1].GetFilterChainMatch().GetServerNames(); len(sn) != 2 || len(wc) != 2 || wc[0].GetName() != "db/a" || wc[0].GetWeight() != 3 || wc[1].GetName() != "db/b" || wc[1].GetWeight() != 1 {
		t.Errorf("db.example.com chain: names %v clusters %v", sn, wc)
	}
	if fcs[2].GetFilterChainMatch() != nil || proxy(fcs[2]).GetCluster() != "db/b" {
		t.Errorf("catch-all chain: match %v", fcs[2].GetFilterChainMatch())
	}
	if len(set[resource.SecretType]) != 0 {
		t.Errorf("secrets = %d, a passthrough listener needs none", len(set[resource.SecretType]))
	}
	for _, res := range set[resource.ListenerType] {
		if l := res.(*listener.Listener); l.GetName() == "tls-203.0.113.41-443" {
			t.Errorf("group h's listener reached group g")
		}
	}
	for _, rc := range set[resource.RouteType] {
		if rc.(*route.RouteConfiguration).GetName() == tl.GetName() {
			t.Errorf("a TLS listener has no route configuration")
		}
	}
}

// TestGatewayAPIDeterministic: the order of gateways, services and
// passthrough entries does not change the output.
func TestGatewayAPIDeterministic(t *testing.T) {
	r := gatewayAPIModel(t)
	cfg := r.Config
	cfg.Gateways, cfg.Services = slices.Clone(cfg.Gateways), slices.Clone(cfg.Services)
	slices.Reverse(cfg.Gateways)
	slices.Reverse(cfg.Services)
	for i := range cfg.Gateways {
		ls := slices.Clone(cfg.Gateways[i].Listeners)
		for j := range ls {
			ls[j].Passthrough = slices.Clone(ls[j].Passthrough)
			slices.Reverse(ls[j].Passthrough)
		}
		cfg.Gateways[i].Listeners = ls
	}
	r2 := resolve(t, cfg, model.Options{})
	a, b := translate.Group(r, "g", translate.Gateway), translate.Group(r2, "g", translate.Gateway)
	for typ := range a {
		if len(a[typ]) != len(b[typ]) {
			t.Fatalf("%s: %d vs %d resources", typ, len(a[typ]), len(b[typ]))
		}
		for i := range a[typ] {
			if !proto.Equal(a[typ][i], b[typ][i]) {
				t.Errorf("%s[%d] differs with reordered input", typ, i)
			}
		}
	}
}
