package model_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// gatewayAPIWorld is one Gateway API gateway with two HTTP listeners and
// a DSL service of the operator owning the catch-all on no listener.
func gatewayAPIWorld() (model.Gateway, model.Service) {
	g := model.Gateway{Name: "gw.infra.gw", Group: "edge", Origin: "infra/gw", Listeners: []model.Listener{
		{Name: "http-80", VIP: netip.MustParseAddr("203.0.113.9"), Port: 80, Protocol: model.HTTP},
		{Name: "http-8080", VIP: netip.MustParseAddr("203.0.113.9"), Port: 8080, Protocol: model.HTTP},
	}}
	op := svc("op", "", "/")
	op.Namespace = model.Operator
	return g, op
}

// route is a Gateway API service of namespace ns on the listeners named,
// created sec seconds after the epoch.
func route(name, ns string, sec int, host, prefix string, listeners ...string) model.Service {
	s := svc(name, host, prefix)
	s.Namespace, s.Origin, s.Created, s.GatewayAPI = ns, model.Origin(ns+"/"+name), time.Unix(int64(sec), 0), true
	s.Routes[0].SegmentPrefix = true
	for _, l := range listeners {
		s.Listeners = append(s.Listeners, model.ListenerRef{Gateway: "gw.infra.gw", Listener: l})
	}
	return s
}

// TestGatewayAPIServicesSkipOwnership: Gateway API routes of several
// namespaces attach to one listener with no hostname (Hosts nil, "*"),
// and to a host another namespace's route already serves, with no
// catch-all namespace listed: the Gateway's allowedRoutes governed that.
// A route with the same match as an older one is no duplicate (the
// translator serves the oldest first). A DSL or annotation service keeps
// both rules.
func TestGatewayAPIServicesSkipOwnership(t *testing.T) {
	g, op := gatewayAPIWorld()
	a := route("a", "team-a", 1, "", "/a", "http-80")
	b := route("b", "team-b", 2, "", "/b", "http-80")
	c := route("c", "team-c", 3, "", "/a", "http-8080") // /a again, other listener
	d := route("d", "team-d", 4, "", "/a", "http-80")   // /a again, same listener: a is older
	e := route("e", "team-e", 5, "shop.example.com", "/", "http-80")
	f := route("f", "team-f", 6, "shop.example.com", "/f", "http-80") // another namespace, same host
	ann := svc("ann", "", "/x")                                       // an annotation service asking for "*"
	ann.Namespace, ann.Origin = "team-a", "team-a/ann"
	r := model.Resolve(model.Config{Gateways: []model.Gateway{g}, Services: []model.Service{op, a, b, c, d, e, f, ann}}, model.Options{})
	if got := names(r.Config.Services, func(s model.Service) string { return s.Name }); got != "a,b,c,d,e,f,op" {
		t.Errorf("accepted %s, want a,b,c,d,e,f,op", got)
	}
	var msgs []string
	for _, p := range r.Problems {
		msgs = append(msgs, p.Name+" "+p.Field+": "+p.Msg)
	}
	all := strings.Join(msgs, "\n")
	for _, w := range []string{`ann hosts: the catch-all host`} {
		if !strings.Contains(all, w) {
			t.Errorf("no problem %q in\n%s", w, all)
		}
	}
	if len(msgs) != 1 {
		t.Errorf("problems\n%s\nwant only ann's catch-all", all)
	}
	got := names(r.Listeners, func(l model.EnvoyListener) string { return l.Name + "=" + strings.Join(l.Services, "+") })
	if want := "http-203.0.113.9-80=a+b+d+e+f,http-203.0.113.9-8080=c"; got != want {
		t.Errorf("listeners %s, want %s: each Gateway API service only on its own", got, want)
	}
}

// TestGatewayAPIServicesClaimNoHosts: a Gateway API route, even the
// oldest, owns no host: a later DSL or annotation service of another
// namespace still claims it (on its own listeners).
func TestGatewayAPIServicesClaimNoHosts(t *testing.T) {
	g, _ := gatewayAPIWorld()
	a := route("a", "team-a", 1, "shop.example.com", "/", "http-80")
	k := svc("k", "shop.example.com", "/k")
	k.Namespace, k.Origin, k.Created = "team-k", "team-k/k", time.Unix(2, 0)
	r := model.Resolve(model.Config{Gateways: []model.Gateway{g}, Services: []model.Service{a, k}}, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems %v", r.Problems)
	}
	if got := names(r.Config.Services, func(s model.Service) string { return s.Name }); got != "a,k" {
		t.Errorf("accepted %s, want a,k", got)
	}
}

// TestRouteKeyHasEveryMatch: routes differing only by a header regex, a
// header's presence, or by matching whole segments are not duplicates;
// the same segment prefix with or without its trailing "/" is.
func TestRouteKeyHasEveryMatch(t *testing.T) {
	base := func(name string) model.Service {
		s := svc(name, "x.example.com", "/p")
		s.Namespace = "ns"
		return s
	}
	a := base("a")
	a.Routes[0].Headers = []model.HeaderMatch{{Name: "x-v", Exact: "1"}}
	b := base("b")
	b.Routes[0].Headers = []model.HeaderMatch{{Name: "x-v", Regex: "1"}}
	c := base("c")
	c.Routes[0].Headers = []model.HeaderMatch{{Name: "x-v", Present: true}}
	d := base("d")
	d.Routes[0].SegmentPrefix = true
	e := base("e")
	e.Routes[0].Prefix, e.Routes[0].SegmentPrefix = "/p/", true
	f := base("f")
	f.Routes[0].Queries = []model.QueryMatch{{Name: "q", Regex: "1"}}
	g := base("g")
	g.Routes[0].Queries = []model.QueryMatch{{Name: "q", Exact: "1"}}
	r := model.Resolve(model.Config{Services: []model.Service{a, b, c, d, e, f, g}}, model.Options{})
	if got := names(r.Config.Services, func(s model.Service) string { return s.Name }); got != "a,b,c,d,f,g" {
		t.Fatalf("accepted %s, want a,b,c,d,f,g (e repeats d's segment prefix)", got)
	}
}

// TestSegmentPrefixChecks: only a prefix route matches by segments, and
// its prefix cannot hold ? or #.
func TestSegmentPrefixChecks(t *testing.T) {
	for name, tc := range map[string]struct {
		route model.Route
		field string
	}{
		"exact":        {model.Route{Exact: "/x", SegmentPrefix: true}, "routes[0].segmentPrefix"},
		"query in it":  {model.Route{Prefix: "/x?y", SegmentPrefix: true}, "routes[0].prefix"},
		"fragment":     {model.Route{Prefix: "/x#", SegmentPrefix: true}, "routes[0].prefix"},
		"valid prefix": {model.Route{Prefix: "/x/", SegmentPrefix: true}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			s := svc("a", "a.example.com", "/")
			tc.route.Targets = s.Routes[0].Targets
			s.Routes[0] = tc.route
			r := model.Resolve(model.Config{Services: []model.Service{s}}, model.Options{})
			var fields []string
			for _, p := range r.Problems {
				fields = append(fields, p.Field)
			}
			if got := strings.Join(fields, ","); got != tc.field {
				t.Errorf("problems on %q, want %q (%v)", got, tc.field, r.Problems)
			}
		})
	}
}

// TestMirrorTwice: Gateway API allows several RequestMirror filters to
// one backend; the model serves them all.
func TestMirrorTwice(t *testing.T) {
	s := gatewayAPIService()
	s.Routes[0].Mirrors = append(s.Routes[0].Mirrors, s.Routes[0].Mirrors[0])
	r := model.Resolve(model.Config{Services: []model.Service{s}}, model.Options{})
	if len(r.Problems) > 0 || len(r.Config.Services) != 1 {
		t.Fatalf("problems %v", r.Problems)
	}
}
