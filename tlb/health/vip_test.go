package health

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

type upSet map[netip.Addr]bool

func (u upSet) Up(rs netip.Addr) bool { return u[rs] }

var (
	vip1 = netip.MustParseAddr("203.0.113.10")
	vip2 = netip.MustParseAddr("203.0.113.20")
	vip3 = netip.MustParseAddr("198.51.100.5")
	gw1  = netip.MustParseAddr("198.18.1.1")
	gw2  = netip.MustParseAddr("198.18.1.2")
	gw3  = netip.MustParseAddr("198.18.1.3")
)

func TestEvaluateReadinessAnnouncement(t *testing.T) {
	vips := VIPTable{vip1: {gw1, gw2, gw1}, vip2: {gw3}, vip3: {gw2}}
	subnets := []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("198.51.100.0/24")}
	cases := map[string]struct {
		up         upSet
		programmed bool
		ready      bool
		subnets    []string
		perVIP     []string
	}{
		"all up": {upSet{gw1: true, gw2: true, gw3: true}, true, true,
			[]string{"198.51.100.0/24", "203.0.113.0/24"}, []string{"198.51.100.5/32", "203.0.113.10/32", "203.0.113.20/32"}},
		"gw2 down: vip3 dark, its subnet withdrawn": {upSet{gw1: true, gw3: true}, true, true,
			[]string{"203.0.113.0/24"}, []string{"203.0.113.10/32", "203.0.113.20/32"}},
		"only gw3":            {upSet{gw3: true}, true, true, []string{"203.0.113.0/24"}, []string{"203.0.113.20/32"}},
		"all down":            {upSet{}, true, false, nil, nil},
		"ipvs not programmed": {upSet{gw1: true, gw2: true, gw3: true}, false, false, nil, nil},
	}
	for name, tc := range cases {
		hs := Evaluate(vips, tc.up, nil)
		if hs[2].VIP != vip2 || hs[1].Total != 2 {
			t.Fatalf("%s: Evaluate = %+v (want sorted, duplicates counted once)", name, hs)
		}
		ready, reason := Readiness(tc.programmed, hs)
		if ready != tc.ready || (!ready && reason == "") {
			t.Errorf("%s: Readiness = %v %q, want %v", name, ready, reason, tc.ready)
		}
		if got := strs(Announcement(ready, AnnounceSubnets, subnets, hs)); !slices.Equal(got, tc.subnets) {
			t.Errorf("%s: subnets = %v, want %v", name, got, tc.subnets)
		}
		if got := strs(Announcement(ready, AnnounceVIPs, subnets, hs)); !slices.Equal(got, tc.perVIP) {
			t.Errorf("%s: per-VIP = %v, want %v", name, got, tc.perVIP)
		}
	}
	// No VIP at all (an L4 cluster without a Service): ready, so
	// rollouts complete, and nothing to announce.
	if ok, reason := Readiness(true, nil); !ok || reason != "" {
		t.Errorf("Readiness with no VIPs = %v %q, want ready", ok, reason)
	}
	if got := Announcement(true, AnnounceSubnets, subnets, nil); got != nil {
		t.Errorf("announced %v with no VIPs, want nothing", got)
	}
	if ok, _ := Readiness(false, nil); ok {
		t.Error("ready with no VIPs before IPVS was programmed")
	}
	// A VIP with no real server: not ready.
	if ok, reason := Readiness(true, []VIPHealth{{VIP: vip1}}); ok || !strings.Contains(reason, "no real servers") {
		t.Errorf("Readiness with a VIP and no real server = %v %q", ok, reason)
	}
}

func strs(ps []netip.Prefix) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// TestL7FoldsIntoVIPHealth: the decision as a table. A VIP with L7
// services is up only while a gateway is healthy and one of its L7
// services has a ready backend; a VIP without any keeps the gateway rule.
// Per-VIP announcements follow Up; subnet announcements and readiness
// follow the gateways only.
func TestL7FoldsIntoVIPHealth(t *testing.T) {
	vips := VIPTable{vip1: {gw1, gw2}, vip2: {gw1}}
	subnet := []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}
	cases := map[string]struct {
		up      upSet
		l7      L7Table
		vip1Up  bool
		line    string // vip1's GTM line
		perVIP  []string
		subnets []string
		ready   bool
	}{
		"no L7 services: gateways decide": {up: upSet{gw1: true}, vip1Up: true,
			line: "203.0.113.10 up healthy=1 total=2", perVIP: []string{"203.0.113.10/32", "203.0.113.20/32"}, subnets: []string{"203.0.113.0/24"}, ready: true},
		"one of two L7 services ready": {up: upSet{gw1: true, gw2: true}, l7: L7Table{vip1: {{Name: "a", Ready: 0}, {Name: "b", Ready: 3}}}, vip1Up: true,
			line: "203.0.113.10 up healthy=2 total=2 l7-backends=1/2 services", perVIP: []string{"203.0.113.10/32", "203.0.113.20/32"}, subnets: []string{"203.0.113.0/24"}, ready: true},
		"every L7 service without a ready backend": {up: upSet{gw1: true, gw2: true}, l7: L7Table{vip1: {{Name: "a"}, {Name: "b"}}},
			line:   "203.0.113.10 down healthy=2 total=2 l7-backends=0/2 services: no L7 service of the VIP has a ready backend",
			perVIP: []string{"203.0.113.20/32"}, subnets: []string{"203.0.113.0/24"}, ready: true},
		"every VIP's L7 down: subnet and readiness stay (gateways are fine)": {up: upSet{gw1: true}, l7: L7Table{vip1: {{Name: "a"}}, vip2: {{Name: "b"}}},
			line: "203.0.113.10 down healthy=1 total=2 l7-backends=0/1 services: no L7 service of the VIP has a ready backend", subnets: []string{"203.0.113.0/24"}, ready: true},
		"gateways down, backends ready: down for the gateways": {up: upSet{}, l7: L7Table{vip1: {{Name: "a", Ready: 1}}},
			line: "203.0.113.10 down healthy=0 total=2 l7-backends=1/1 services: no healthy gateway"},
		"L7 state of an unknown VIP is ignored": {up: upSet{gw1: true}, l7: L7Table{vip3: {{Name: "a"}}}, vip1Up: true,
			line: "203.0.113.10 up healthy=1 total=2", perVIP: []string{"203.0.113.10/32", "203.0.113.20/32"}, subnets: []string{"203.0.113.0/24"}, ready: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hs := Evaluate(vips, tc.up, tc.l7)
			if len(hs) != 2 || hs[0].VIP != vip1 {
				t.Fatalf("Evaluate = %+v", hs)
			}
			if hs[0].Up() != tc.vip1Up || Line(hs[0]) != tc.line {
				t.Errorf("vip1: up %v %q, want %v %q", hs[0].Up(), Line(hs[0]), tc.vip1Up, tc.line)
			}
			ready, _ := Readiness(true, hs)
			if ready != tc.ready {
				t.Errorf("ready = %v, want %v", ready, tc.ready)
			}
			if got := strs(Announcement(ready, AnnounceVIPs, subnet, hs)); !slices.Equal(got, tc.perVIP) {
				t.Errorf("per-VIP = %v, want %v", got, tc.perVIP)
			}
			if got := strs(Announcement(ready, AnnounceSubnets, subnet, hs)); !slices.Equal(got, tc.subnets) {
				t.Errorf("subnets = %v, want %v", got, tc.subnets)
			}
		})
	}
}

func TestGTMHandler(t *testing.T) {
	g := NewGTM()
	g.SetHealth(Evaluate(VIPTable{vip1: {gw1, gw2}, vip2: {gw3}, vip3: {gw1}}, upSet{gw1: true}, L7Table{vip3: {{Name: "team/web"}, {Name: "team/api"}}}))
	srv := httptest.NewServer(g)
	defer srv.Close()
	cases := map[string]gtmAnswer{
		"healthy vip":             {"/vip/203.0.113.10", 200, "203.0.113.10 up healthy=1 total=2"},
		"dead vip":                {"/vip/203.0.113.20", 503, "203.0.113.20 down healthy=0 total=1: no healthy gateway"},
		"vip without L7 backends": {"/vip/198.51.100.5", 503, "198.51.100.5 down healthy=1 total=1 l7-backends=0/2 services: no L7 service"},
		"unknown vip":             {"/vip/203.0.113.99", 404, "unknown VIP"},
		"not an ip":               {"/vip/example.com", 400, "bad VIP"},
		"list":                    {"/vip/", 200, "198.51.100.5 down healthy=1 total=1 l7-backends=0/2 services: no L7 service of the VIP has a ready backend\n203.0.113.10 up healthy=1 total=2\n203.0.113.20 down"},
	}
	checkGTMAnswers(t, srv.URL, cases)
	resp, err := http.Post(srv.URL+"/vip/203.0.113.10", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d, want 405", resp.StatusCode)
	}
	// A new decision flips the answer.
	g.SetHealth(Evaluate(VIPTable{vip2: {gw3}}, upSet{gw3: true}, nil))
	resp, _ = http.Get(srv.URL + "/vip/203.0.113.20")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after gw3 recovered: %d, want 200", resp.StatusCode)
	}
	resp, _ = http.Get(srv.URL + "/vip/203.0.113.10")
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("a VIP no longer served: %d, want 404", resp.StatusCode)
	}
}

// gtmAnswer is what GET path on the GTM handler should answer: the
// status code and a part of the body.
type gtmAnswer struct {
	path     string
	code     int
	contains string
}

// checkGTMAnswers GETs each case's path from the GTM handler at base and
// reports every answer that differs from the case's.
func checkGTMAnswers(t *testing.T, base string, cases map[string]gtmAnswer) {
	t.Helper()
	for name, tc := range cases {
		resp, err := http.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s: GET %s = %d %q, want %d containing %q", name, tc.path, resp.StatusCode, body, tc.code, tc.contains)
		}
	}
}
