package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestIndexShowsTheFleet(t *testing.T) {
	code, page := get(t, fakeAPI{st: testState()}, fakeComponents(testComponents()), "/")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	inv := panel(t, page, "inventory")
	for _, want := range []string{"production", "tlb-1", "prod-a", "203.0.113.0/28", "<td>2</td><td>12</td><td>14%</td>"} {
		if !strings.Contains(inv, want) {
			t.Errorf("inventory lacks %q:\n%s", want, inv)
		}
	}
	vips := panel(t, page, "vips")
	for _, want := range []string{`href="/vip/203.0.113.10"`, "shop/web", "production / tlb-1 / prod-a", "db/pg",
		// dir-1 announces .10 (ready, session up, GTM up); dir-2 is not ready.
		"<td>dir-1 </td>", "<td>gw-a </td>"} {
		if !strings.Contains(vips, want) {
			t.Errorf("VIPs panel lacks %q:\n%s", want, vips)
		}
	}
	if strings.Contains(vips, "banner") {
		t.Errorf("VIPs panel has a banner with every source up:\n%s", vips)
	}
	problems := panel(t, page, "problems")
	for _, want := range []string{
		"not ready: no BGP session established", // dir-2
		"peer 198.18.1.1</td><td>BGP session down",
		"down for GTM on dir-1", // 203.0.113.11
		"certificate shop.web.shop-tls</td><td>expires in 9.5 days",
		"Service shop/bad</td><td>InvalidAnnotation: annotation tlb.io/vip: &#34;x&#34; is not a unicast IP address (x3)",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
	if !strings.Contains(panel(t, page, "leases"), "tlb-ipam-7c9") {
		t.Error("leases panel lacks the ipam leader")
	}
	if !strings.Contains(panel(t, page, "gateways"), "The Gateway API is not installed") {
		t.Error("gateways panel does not say the Gateway API is absent")
	}
}

func TestAPIDownBannersOnlyItsPanels(t *testing.T) {
	code, page := get(t, fakeAPI{err: errAPIDown}, fakeComponents(testComponents()), "/")
	if code != http.StatusOK {
		t.Fatalf("status %d: one source down must not fail the page", code)
	}
	for _, id := range []string{"inventory", "vips", "leases", "events", "gateways"} {
		if p := panel(t, page, id); !strings.Contains(p, `<div class="banner" data-source="api">API server unreachable: dial tcp 10.96.0.1:443`) {
			t.Errorf("panel %s has no API banner:\n%s", id, p)
		}
	}
	// The directors' panels still render, banner-free, and the VIPs their
	// GTM knows are listed.
	comps := panel(t, page, "components")
	if strings.Contains(comps, "banner") {
		t.Errorf("components carry a banner although every component answered:\n%s", comps)
	}
	for _, want := range []string{"198.18.1.1", "established", "198.18.2.2"} {
		if !strings.Contains(component(t, page, "dir-1"), want) {
			t.Errorf("dir-1 lacks %q", want)
		}
	}
	if !strings.Contains(panel(t, page, "vips"), `href="/vip/203.0.113.10"`) {
		t.Error("with the API server down the VIPs the directors serve are gone")
	}
	if !strings.Contains(panel(t, page, "problems"), "API server</td><td>unreachable") {
		t.Error("problems do not list the API server")
	}
}

func TestComponentDownBannersOnlyItsBlock(t *testing.T) {
	comps := testComponents()
	comps[1] = Component{Role: RoleDirector, Name: "dir-2", URL: "http://198.18.1.3:9100", Err: "GET http://198.18.1.3:9100/readyz: connection refused"}
	_, page := get(t, fakeAPI{st: testState()}, fakeComponents(comps), "/")
	if b := component(t, page, "dir-2"); !strings.Contains(b, `class="banner" data-source="director dir-2">director dir-2 unreachable: GET http://198.18.1.3:9100/readyz: connection refused`) {
		t.Errorf("dir-2 has no banner:\n%s", b)
	}
	for _, name := range []string{"dir-1", "gw-a", "edge-a"} {
		if b := component(t, page, name); strings.Contains(b, "banner") {
			t.Errorf("%s carries a banner:\n%s", name, b)
		}
	}
	for _, id := range []string{"inventory", "vips", "leases", "events"} {
		if p := panel(t, page, id); strings.Contains(p, "banner") {
			t.Errorf("panel %s carries a banner although the API server answered:\n%s", id, p)
		}
	}
}

func TestFileModeShowsWhatComponentsKnow(t *testing.T) {
	_, page := get(t, nil, fakeComponents(testComponents()), "/")
	if !strings.Contains(panel(t, page, "inventory"), "File mode") {
		t.Error("no file-mode note")
	}
	if strings.Contains(page, `class="banner"`) {
		t.Error("file mode shows a banner: the API server is not a source there")
	}
	for _, id := range []string{"leases", "events", "gateways"} {
		if strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("file mode shows the %s panel", id)
		}
	}
	vips := panel(t, page, "vips")
	for _, want := range []string{"203.0.113.10", "203.0.113.11", "<td>gw-a </td>"} {
		if !strings.Contains(vips, want) {
			t.Errorf("VIPs panel lacks %q:\n%s", want, vips)
		}
	}
}

func TestNamesAreEscaped(t *testing.T) {
	st := testState()
	st.Services[0].Name = `<script>alert("svc")</script>`
	st.Events[0].Message = `<img src=x onerror=alert(1)>`
	st.Pools[0].Name = `"><b>pool</b>`
	comps := testComponents()
	comps[0].Sessions[0].Peer = `<i>peer</i>`
	comps[0].GTM["203.0.113.10"] = GTMAnswer{Up: true, Line: `203.0.113.10 up <u>x</u>`}
	for _, path := range []string{"/", "/vip/203.0.113.10"} {
		_, page := get(t, fakeAPI{st: st}, fakeComponents(comps), path)
		for _, raw := range []string{"<script>", "<img", "<b>pool", "<i>peer", "<u>x"} {
			if strings.Contains(page, raw) {
				t.Errorf("GET %s: %q reached the page unescaped", path, raw)
			}
		}
		if !strings.Contains(page, "&lt;script&gt;") {
			t.Errorf("GET %s: the escaped Service name is missing", path)
		}
	}
}

func TestVIPPage(t *testing.T) {
	code, page := get(t, fakeAPI{st: testState()}, fakeComponents(testComponents()), "/vip/203.0.113.10")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{
		"shop/web", "environment=production", "443/tcp", "<td>edge</td>", "shop.example.com", "<td>shop-tls</td>",
		"shop.web.shop-tls</td><td>9.5</td>", // certificate expiry from l7
		"<td>dir-1</td>", "1/1</td><td>true</td>", "203.0.113.10 up healthy=1 total=2",
		"<td>dir-2</td>", "0/1</td><td>false</td>",
		"connections_total</td><td>port=443 protocol=tcp</td><td>12345</td>", // traffic
		"198.18.2.3</td><td><span class=\"down\">down</span>",                // real server health
		"Bound on netd: gw-a",
		"This director exports no per-VIP traffic series", // dir-2: degrades
	} {
		if !strings.Contains(page, want) {
			t.Errorf("VIP page lacks %q", want)
		}
	}
	if code, _ := get(t, fakeAPI{st: testState()}, fakeComponents(testComponents()), "/vip/198.51.100.1"); code != http.StatusNotFound {
		t.Errorf("unknown VIP: status %d, want 404", code)
	}
	if code, _ := get(t, fakeAPI{st: testState()}, fakeComponents(testComponents()), "/vip/not-an-ip"); code != http.StatusBadRequest {
		t.Errorf("bad VIP: status %d, want 400", code)
	}
}

func TestReadOnly(t *testing.T) {
	h, err := NewHandler(&Collector{API: fakeAPI{st: testState()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := httptestRecorder(h, m, "/")
		if rec != http.StatusMethodNotAllowed {
			t.Errorf("%s /: status %d, want 405", m, rec)
		}
	}
}

// TestPageShowsSlowAndRates: the page marks a slow component with its
// answer time, one with no answer yet with a yellow banner (not a red
// one), an Envoy with its versions, and a VIP with its traffic.
func TestPageShowsSlowAndRates(t *testing.T) {
	comps := testComponents()
	comps[0].Slow, comps[0].Took = true, 1500*time.Millisecond
	comps[0].VIPRates, comps[0].RateOver = map[string]VIPRate{"203.0.113.10": {ConnsPerSec: 12.5, BytesPerSec: 3200}}, 10*time.Second
	comps[2] = Component{Role: RoleNetd, Name: "gw-a", URL: comps[2].URL, Slow: true, NoData: true, Pending: 5 * time.Second, VIPsBound: -1}
	comps = append(comps, Component{Role: RoleEnvoy, Name: "gw-a/edge", Ready: true,
		EnvoyState: &EnvoyStats{Connected: true, State: "live", ListenersActive: 2, LDSVersion: "g-1", CDSVersion: "g-2"}})
	h, err := NewHandler(fixedSnapshot{API: testState(), Components: comps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	page := rec.Body.String()
	for _, want := range []string{
		`<p class="slow" data-timing="slow">slow (1500 ms)</p>`,
		`<div class="banner slow" data-source="netd gw-a">netd gw-a slow: no answer yet after 5000 ms</div>`,
		`<td class="rate">12.5/s</td><td class="rate">3.2 kB/s</td>`,
		`Envoy live · xDS <span class="up">connected</span> · listeners 2 active, 0 warming · LDS <code>g-1</code>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// fixedSnapshot is a Snapshotter that returns itself.
type fixedSnapshot Snapshot

func (f fixedSnapshot) Collect(context.Context) Snapshot { return Snapshot(f) }
