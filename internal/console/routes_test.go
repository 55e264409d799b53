package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/api"
)

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
