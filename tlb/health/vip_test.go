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
		hs := Evaluate(vips, tc.up)
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
	if ok, reason := Readiness(true, nil); ok || !strings.Contains(reason, "no real servers") {
		t.Errorf("Readiness with no VIPs = %v %q", ok, reason)
	}
}

func strs(ps []netip.Prefix) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestGTMHandler(t *testing.T) {
	up := upSet{gw1: true}
	g := NewGTM(up)
	g.SetVIPs(VIPTable{vip1: {gw1, gw2}, vip2: {gw3}})
	srv := httptest.NewServer(g)
	defer srv.Close()
	cases := map[string]struct {
		path     string
		code     int
		contains string
	}{
		"healthy vip": {"/vip/203.0.113.10", 200, "203.0.113.10 up healthy=1 total=2"},
		"dead vip":    {"/vip/203.0.113.20", 503, "203.0.113.20 down healthy=0 total=1"},
		"unknown vip": {"/vip/203.0.113.99", 404, "unknown VIP"},
		"not an ip":   {"/vip/example.com", 400, "bad VIP"},
		"list":        {"/vip/", 200, "203.0.113.10 up healthy=1 total=2\n203.0.113.20 down"},
	}
	for name, tc := range cases {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s: GET %s = %d %q, want %d containing %q", name, tc.path, resp.StatusCode, body, tc.code, tc.contains)
		}
	}
	resp, err := http.Post(srv.URL+"/vip/203.0.113.10", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d, want 405", resp.StatusCode)
	}
	// Recovery flips the answer.
	up[gw3] = true
	resp, _ = http.Get(srv.URL + "/vip/203.0.113.20")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after gw3 recovered: %d, want 200", resp.StatusCode)
	}
}
