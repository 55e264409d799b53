package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/routetable"
)

// TestHTTPComponentsReadL7Routes: the console reads the routes of a real
// l7 route table (l7/routetable's GET /routes) from an l7 endpoint.
func TestHTTPComponentsReadL7Routes(t *testing.T) {
	table := routetable.New("edge")
	table.Set(model.Config{
		Gateways: []model.Gateway{{Name: "edge", Listeners: []model.Listener{{Name: "https", VIP: netip.MustParseAddr("203.0.113.10"), Port: 443, Protocol: model.HTTPS}}}},
		Services: []model.Service{{Name: "shop", Origin: "shop.tlb", Hosts: []string{"shop.example.com"},
			Listeners: []model.ListenerRef{{Gateway: "edge", Listener: "https"}},
			Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "web", Weight: 1}}}},
			Upstreams: []model.Upstream{{Name: "web", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("10.0.0.1:8080")}}}}}},
	}, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ready\n")) })
	mux.HandleFunc("/metrics", func(http.ResponseWriter, *http.Request) {})
	mux.Handle("/routes", table)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	got := HTTPComponents{Endpoints: []Endpoint{{Role: RoleL7, Name: "edge-a", URL: hs.URL}}}.ReadComponents(context.Background())
	if len(got) != 1 || got[0].Err != "" {
		t.Fatalf("components %+v", got)
	}
	want := []api.RouteRow{{Gateway: "edge", Listener: "https", VIP: "203.0.113.10", Port: 443, Protocol: "HTTPS", Host: "shop.example.com",
		Match: "prefix", Path: "/", Service: "shop", Origin: "shop.tlb", Source: "dsl",
		Upstreams: []api.RouteUpstream{{Name: "web", Weight: 1, Endpoints: []string{"10.0.0.1:8080"}}}}}
	if !reflect.DeepEqual(got[0].Routes, want) {
		t.Errorf("routes\n got %+v\nwant %+v", got[0].Routes, want)
	}

	// An l7 without /routes (404) is read as before; a broken body is an error.
	mux2 := http.NewServeMux()
	mux2.HandleFunc("/readyz", func(http.ResponseWriter, *http.Request) {})
	mux2.HandleFunc("/metrics", func(http.ResponseWriter, *http.Request) {})
	old := httptest.NewServer(mux2)
	t.Cleanup(old.Close)
	mux2.HandleFunc("/broken/routes", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{")) })
	mux2.HandleFunc("/broken/readyz", func(http.ResponseWriter, *http.Request) {})
	mux2.HandleFunc("/broken/metrics", func(http.ResponseWriter, *http.Request) {})
	got = HTTPComponents{Endpoints: []Endpoint{{Role: RoleL7, Name: "old", URL: old.URL}, {Role: RoleL7, Name: "broken", URL: old.URL + "/broken"}}}.ReadComponents(context.Background())
	if got[0].Err != "" || got[0].Routes != nil {
		t.Errorf("l7 without /routes: %+v", got[0])
	}
	if !strings.Contains(got[1].Err, "GET /routes: parse routes") {
		t.Errorf("l7 with a broken /routes: err %q", got[1].Err)
	}
}

// routesComponents are testComponents with l7 edge-a serving a DSL route
// and an annotation route on 203.0.113.10, and one on a VIP no other
// source knows.
func routesComponents() []Component {
	comps := testComponents()
	for i := range comps {
		if comps[i].Name != "edge-a" {
			continue
		}
		comps[i].Routes = []api.RouteRow{
			{Gateway: "edge", Listener: "https", VIP: "203.0.113.10", Port: 443, Protocol: "HTTPS", Host: "shop.example.com", Match: "prefix", Path: "/api",
				Service: "web", Namespace: "shop", Origin: "shop/web", Source: "kubernetes",
				Upstreams: []api.RouteUpstream{{Name: "web", Weight: 90, Endpoints: []string{"10.0.0.1:8080"}}, {Name: "canary", Weight: 10}}},
			{Gateway: "edge", Listener: "http", VIP: "203.0.113.10", Port: 80, Protocol: "HTTP", Host: "<b>status</b>.example.com", Match: "exact", Path: "/healthz",
				Method: "GET", Service: "status", Origin: "status.tlb", Source: "dsl", Upstreams: []api.RouteUpstream{{Name: "probe", Weight: 1}}},
			{Gateway: "edge", Listener: "http", VIP: "203.0.113.77", Port: 80, Protocol: "HTTP", Host: "old.example.com", Match: "prefix", Path: "/",
				Service: "old", Origin: "old.tlb", Source: "dsl", Redirect: true},
		}
	}
	return comps
}

func TestVIPPageShowsL7Routes(t *testing.T) {
	code, page := get(t, fakeAPI{st: testState()}, fakeComponents(routesComponents()), "/vip/203.0.113.10")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	routes := panel(t, page, "vip-routes")
	for _, want := range []string{
		// port 80 sorts first; names are escaped.
		"<td>edge-a</td><td>edge/http 80/HTTP</td><td>&lt;b&gt;status&lt;/b&gt;.example.com</td>",
		"GET exact <code>/healthz</code>", "<td>status</td><td>dsl <span class=\"muted\">status.tlb</span></td><td>probe</td>",
		"<td>edge/https 443/HTTPS</td><td>shop.example.com</td>", "prefix <code>/api</code>",
		"<td>shop/web</td><td>kubernetes <span class=\"muted\">shop/web</span></td><td>web 90% (10.0.0.1:8080), canary 10%</td>",
	} {
		if !strings.Contains(routes, want) {
			t.Errorf("routes panel lacks %q:\n%s", want, routes)
		}
	}
	if strings.Index(routes, "/healthz") > strings.Index(routes, "/api") {
		t.Errorf("routes not sorted by port:\n%s", routes)
	}
	if strings.Contains(routes, "old.example.com") {
		t.Errorf("a route of another VIP on this VIP's page:\n%s", routes)
	}

	_, page = get(t, fakeAPI{st: testState()}, fakeComponents(routesComponents()), "/vip/203.0.113.77")
	if routes := panel(t, page, "vip-routes"); !strings.Contains(routes, "<td>redirect</td>") {
		t.Errorf("a VIP only l7 knows: routes panel\n%s", routes)
	}
	_, page = get(t, fakeAPI{st: testState()}, fakeComponents(testComponents()), "/vip/203.0.113.10")
	if routes := panel(t, page, "vip-routes"); !strings.Contains(routes, "No l7 server reports a route on this VIP.") {
		t.Errorf("no routes: panel\n%s", routes)
	}

	_, page = get(t, fakeAPI{st: testState()}, fakeComponents(routesComponents()), "/")
	if vips := panel(t, page, "vips"); !strings.Contains(vips, `<a href="/vip/203.0.113.10#vip-routes">2</a>`) {
		t.Errorf("VIPs panel lacks the route count of 203.0.113.10:\n%s", vips)
	}
}

func TestTextListsL7Routes(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, BuildView(Snapshot{API: testState(), Components: routesComponents()})); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"    route 443 shop.example.com/api (prefix web) -> web 90% (10.0.0.1:8080), canary 10% [kubernetes, on edge-a]",
		"    route 80 old.example.com/ (prefix old) -> redirect [dsl, on edge-a]",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
