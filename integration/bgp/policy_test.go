//go:build !lab

package bgp_test

import (
	"context"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/bgp/birdlab"
)

// TestAdvertisementAttributesReachBIRD: over iBGP, BIRD sees the
// communities, large communities and local preference of the VIP range's
// advertisement, and the VIPs aggregated into one route; a changed
// advertisement is sent again, and an invalid one changes nothing.
func TestAdvertisementAttributesReachBIRD(t *testing.T) {
	l := needLab(t)
	ctx := context.Background()
	r := birdlab.StartForTest(t, l.Router, birdlab.RouterConfig{RouterID: l.RouterAddr, ASN: directorASN,
		Neighbors: neighbors(l, 1)})
	cfg := speakerConfig(l, 0)
	cfg.Peers[0].ASN = directorASN // iBGP: local preference is only sent there
	lp := uint32(250)
	cfg.Advertisements = []bgp.AdvertisementConfig{{
		Prefixes: []string{"203.0.113.0/25"}, Communities: []string{"64512:100", "65000:7"},
		LargeCommunities: []string{"64512:1:2"}, LocalPreference: &lp, AggregationLength: 25,
	}}
	s := startSpeaker(t, cfg)
	// Two VIPs of the aggregated range and one outside every advertisement.
	if err := s.Announce(ctx, prefixes("203.0.113.7/32", "203.0.113.9/32", "203.0.113.200/32")); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"BGP.community": "(64512,100) (65000,7)", "BGP.large_community": "(64512, 1, 2)", "BGP.local_pref": "250"}
	waitAttributes(t, r, "203.0.113.0/25", want)
	waitAttributes(t, r, "203.0.113.200/32", map[string]string{"BGP.community": "", "BGP.local_pref": "100"})
	for _, vip := range []string{"203.0.113.7/32", "203.0.113.9/32"} {
		if rs, err := r.Routes(ctx, vip); err != nil || len(rs) != 0 {
			t.Errorf("%s reached BIRD as its own route (%v, %v), want only the aggregate", vip, rs, err)
		}
	}

	lp2 := uint32(90)
	changed := []bgp.AdvertisementConfig{{Prefixes: []string{"203.0.113.0/25"}, Communities: []string{"64512:300"},
		LocalPreference: &lp2, AggregationLength: 25}}
	if err := s.SetAdvertisements(ctx, changed); err != nil {
		t.Fatal(err)
	}
	waitAttributes(t, r, "203.0.113.0/25", map[string]string{"BGP.community": "(64512,300)", "BGP.large_community": "", "BGP.local_pref": "90"})

	bad := []bgp.AdvertisementConfig{{Name: "VIPPool blue", Prefixes: []string{"203.0.113.0/25"}, Communities: []string{"64512:70000"}}}
	if err := s.SetAdvertisements(ctx, bad); err == nil {
		t.Fatal("an advertisement with community 64512:70000 was accepted")
	}
	// Sentinel: a new VIP outside the range; once BIRD has it, a change
	// made by the refused call would have arrived too.
	if err := s.Announce(ctx, prefixes("203.0.113.7/32", "203.0.113.201/32")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.WaitRoutes(ctx, "203.0.113.201/32", 10*time.Second, hasNextHops(l.DirectorAddrs[0])); err != nil {
		t.Fatal(err)
	}
	waitAttributes(t, r, "203.0.113.0/25", map[string]string{"BGP.community": "(64512,300)", "BGP.local_pref": "90"})
}

// waitAttributes polls BIRD until the route for prefix has every attribute
// of want ("" for absent), failing after 10s.
func waitAttributes(t *testing.T, r *birdlab.Router, prefix string, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got map[string]string
	for time.Now().Before(deadline) {
		var err error
		if got, err = r.Attributes(context.Background(), prefix); err != nil {
			t.Fatal(err)
		}
		if got != nil && matches(got, want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, _ := r.Birdc(context.Background(), "show", "route", "all", prefix)
	t.Fatalf("route %s at BIRD has attributes %v, want %v:\n%s", prefix, got, want, out)
}

func matches(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
