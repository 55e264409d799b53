package translate_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// gwAPIService is a Gateway API service (as l7/gatewayapi builds it) of
// namespace ns, created sec seconds after the epoch, on the listeners
// named of gateway "gw", with no hostname: "*".
func gwAPIService(ns, name string, sec int, routes []model.Route, listeners ...string) model.Service {
	s := model.Service{Name: "hr." + ns + "." + name, Group: "g", Origin: model.Origin(ns + "/" + name), Namespace: ns,
		Created: time.Unix(int64(sec), 0), GatewayAPI: true,
		Upstreams: []model.Upstream{{Name: "u", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.1:80"), Weight: 1}}}}}
	for _, l := range listeners {
		s.Listeners = append(s.Listeners, model.ListenerRef{Gateway: "gw", Listener: l})
	}
	for _, r := range routes {
		r.Targets = []model.WeightedTarget{{Upstream: "u"}}
		s.Routes = append(s.Routes, r)
	}
	return s
}

func gwAPIResolve(t *testing.T, svcs ...model.Service) model.Resolved {
	t.Helper()
	vip := netip.MustParseAddr("203.0.113.50")
	cfg := model.Config{
		Gateways: []model.Gateway{{Name: "gw", Group: "g", Origin: "infra/gw", Listeners: []model.Listener{
			{Name: "a", VIP: vip, Port: 80, Protocol: model.HTTP},
			{Name: "b", VIP: vip, Port: 8080, Protocol: model.HTTP},
		}}},
		Services: svcs,
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	if err := validate.Set(translate.Group(r, "g", translate.Gateway)); err != nil {
		t.Fatalf("translated set fails validation: %v", err)
	}
	return r
}

// routeNames returns the route names of each virtual host of the named
// route configuration, "host: r1 r2".
func routeNames(rcs []*route.RouteConfiguration, name string) []string {
	var out []string
	for _, rc := range rcs {
		if rc.GetName() != name {
			continue
		}
		for _, vh := range rc.GetVirtualHosts() {
			var rs []string
			for _, rt := range vh.GetRoutes() {
				rs = append(rs, rt.GetName())
			}
			out = append(out, vh.GetName()+": "+strings.Join(rs, " "))
		}
	}
	return out
}

// TestGatewayAPIPrecedenceAcrossRoutes: the routes of several HTTPRoutes
// on one listener and host are ordered as the spec asks: exact path,
// then the longest prefix or regex by characters, then a method, then
// the most headers, then the most queries; among equals the oldest
// route, then namespace/name; within a route its order. Routes on the
// other listener appear only there, and none reaches proxyless clients.
func TestGatewayAPIPrecedenceAcrossRoutes(t *testing.T) {
	seg := func(p string) model.Route { return model.Route{Prefix: p, SegmentPrefix: true} }
	withMethod := func(r model.Route) model.Route { r.Method = "GET"; return r }
	withHeader := func(r model.Route, n int) model.Route {
		for i := range n {
			r.Headers = append(r.Headers, model.HeaderMatch{Name: "x-h" + string(rune('a'+i)), Exact: "1"})
		}
		return r
	}
	withQuery := func(r model.Route) model.Route {
		r.Queries = []model.QueryMatch{{Name: "q", Exact: "1"}}
		return r
	}
	// Names sort against age: b/zeta is the oldest.
	zeta := gwAPIService("b", "zeta", 1, []model.Route{
		{Name: "root", Prefix: "/", SegmentPrefix: true},
		{Name: "short", Prefix: "/ab", SegmentPrefix: true},
		{Name: "tie", Prefix: "/abcdefgh", SegmentPrefix: true, Queries: []model.QueryMatch{{Name: "z", Exact: "1"}}},
	}, "a")
	alpha := gwAPIService("a", "alpha", 3, []model.Route{
		{Name: "exact", Exact: "/x"},
		{Name: "regex", Regex: "/r/[0-9]"}, // 8 characters: after /abcdefgh, before /ab
		withQuery(seg("/abcdefgh")),
		withHeader(seg("/abcdefgh"), 1),
	}, "a")
	mid := gwAPIService("b", "mid", 2, []model.Route{
		withHeader(seg("/abcdefgh"), 2),
		withMethod(seg("/abcdefgh")),
		seg("/abcdefgh"),
		{Name: "other", Prefix: "/other", SegmentPrefix: true},
	}, "b")
	// As old as alpha, as specific as its route 3: a/alpha first.
	twin := gwAPIService("c", "twin", 3, []model.Route{{Prefix: "/abcdefgh", SegmentPrefix: true,
		Headers: []model.HeaderMatch{{Name: "x-other", Exact: "1"}}}}, "a")
	r := gwAPIResolve(t, alpha, zeta, mid, twin)
	rcs := translate.ListenerRoutes(r, "g")
	got := routeNames(rcs, "http-203.0.113.50-80")
	want := []string{"*: hr.a.alpha/exact hr.a.alpha/3 hr.c.twin/0 hr.b.zeta/tie hr.a.alpha/2 hr.a.alpha/regex hr.b.zeta/short hr.b.zeta/root"}
	if !slices.Equal(got, want) {
		t.Errorf("listener a:\n got %q\nwant %q", got, want)
	}
	got = routeNames(rcs, "http-203.0.113.50-8080")
	want = []string{"*: hr.b.mid/1 hr.b.mid/0 hr.b.mid/2 hr.b.mid/other"}
	if !slices.Equal(got, want) {
		t.Errorf("listener b:\n got %q\nwant %q", got, want)
	}
	if vhs := translate.GroupRoutes(r, "g")[0].GetVirtualHosts(); len(vhs) != 0 {
		t.Errorf("proxyless clients see %v; Gateway API services are served only on their listeners", vhs)
	}
	c := translate.NewCache()
	for _, rc := range c.ForKind(r, "g", translate.GRPC, c.Shared(r, "g"))[resource.RouteType] {
		if vhs := rc.(*route.RouteConfiguration).GetVirtualHosts(); len(vhs) != 0 {
			t.Errorf("proxyless clients see %v through the cache", vhs)
		}
	}
}

// TestSegmentPrefix: a Gateway API PathPrefix becomes Envoy's
// path_separated_prefix without its trailing "/" ("/" stays prefix "/"),
// and a prefix rewrite or redirect of it replaces whole segments: "/old"
// to "/new/" makes "/old/x" "/new/x", and to "/" makes it "/x".
func TestSegmentPrefix(t *testing.T) {
	rw := func(p, repl string) model.Route {
		return model.Route{Name: strings.Trim(p, "/") + "-rw", Prefix: p, SegmentPrefix: true,
			URLRewrite: &model.URLRewrite{Path: &model.PathModifier{IsPrefix: true, ReplacePrefix: repl}}}
	}
	moved := model.Route{Name: "moved", Prefix: "/moved/", SegmentPrefix: true,
		Redirect: &model.Redirect{Path: &model.PathModifier{IsPrefix: true, ReplacePrefix: "/here/"}}}
	s := gwAPIService("a", "r", 1, []model.Route{
		{Name: "foo", Prefix: "/foo", SegmentPrefix: true},
		{Name: "bar", Prefix: "/bar/", SegmentPrefix: true},
		rw("/old", "/new/"), rw("/strip/", "/"), rw("/", "/v2"), moved,
	}, "a")
	s.Routes[5].Targets = nil
	r := gwAPIResolve(t, s)
	rs := gatewayAPIRoutes(t, r)
	for name, want := range map[string]string{
		"foo": "/foo", "bar": "/bar", "old-rw": "/old", "strip-rw": "/strip", "moved": "/moved",
	} {
		if got := rs["hr.a.r/"+name].GetMatch().GetPathSeparatedPrefix(); got != want {
			t.Errorf("%s: path_separated_prefix %q, want %q (match %v)", name, got, want, rs["hr.a.r/"+name].GetMatch())
		}
	}
	if m := rs["hr.a.r/-rw"].GetMatch(); m.GetPrefix() != "/" {
		t.Errorf(`"/" matches %v, want prefix "/"`, m)
	}
	for name, want := range map[string]string{"old-rw": "/new", "-rw": "/v2/"} {
		if got := rs["hr.a.r/"+name].GetRoute().GetPrefixRewrite(); got != want {
			t.Errorf("%s: prefix_rewrite %q, want %q", name, got, want)
		}
	}
	if re := rs["hr.a.r/strip-rw"].GetRoute().GetRegexRewrite(); re.GetPattern().GetRegex() != "^/strip/*" || re.GetSubstitution() != "/" {
		t.Errorf("strip: regex rewrite %v, want ^/strip/* -> /", re)
	}
	if got := rs["hr.a.r/moved"].GetRedirect().GetPrefixRewrite(); got != "/here" {
		t.Errorf("moved: redirect prefix_rewrite %q, want /here", got)
	}
}
