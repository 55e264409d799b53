//go:build !lab

package bgp_test

import (
	"context"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/bgp/birdlab"
)

// TestIPv6PrefixesReachBIRD: issue 26 item 1. Over the IPv4 session,
// MP-BGP carries the director's IPv6 VIPs (AFI/SAFI ipv6-unicast) to
// BIRD with the configured IPv6 next hop, beside its IPv4 ones; the IPv6
// range's advertisement applies as for IPv4 (community, aggregation into
// the range); withdrawing the IPv6 VIPs removes them from BIRD's table
// and leaves the IPv4 route.
func TestIPv6PrefixesReachBIRD(t *testing.T) {
	l := needLab(t)
	ctx := context.Background()
	const routerV6, directorV6 = "2001:db8:ffff::1", "2001:db8:ffff::2"
	remove, err := l.AddIPv6(ctx, routerV6, directorV6)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	r := birdlab.StartForTest(t, l.Router, birdlab.RouterConfig{RouterID: l.RouterAddr, ASN: routerASN,
		Neighbors: neighbors(l, 1), IPv6: true})
	cfg := speakerConfig(l, 0)
	cfg.AllowedPrefixes = append(cfg.AllowedPrefixes, "2001:db8:100::/120", "2001:db8:200::/120")
	cfg.NextHopIPv6 = directorV6
	cfg.Advertisements = []bgp.AdvertisementConfig{{
		Prefixes: []string{"2001:db8:100::/120"}, Communities: []string{"64512:600"}, AggregationLength: 120,
	}}
	s := startSpeaker(t, cfg)
	if err := s.Announce(ctx, prefixes("203.0.113.10/32", "2001:db8:100::10/128", "2001:db8:100::11/128", "2001:db8:200::7/128")); err != nil {
		t.Fatal(err)
	}
	director := director(0)
	for prefix, nextHop := range map[string]string{
		"203.0.113.10/32":     l.DirectorAddrs[0],
		"2001:db8:100::/120":  directorV6, // the two VIPs, aggregated
		"2001:db8:200::7/128": directorV6,
	} {
		routes, took, err := r.WaitRoutes(ctx, prefix, 15*time.Second, func(rs []birdlab.Route) bool {
			return len(rs) == 1 && rs[0].NextHop == nextHop && rs[0].Protocol == director
		})
		if err != nil {
			t.Fatalf("%s: %v (BIRD has %v, want one route via %s from %s)", prefix, err, routes, nextHop, director)
		}
		t.Logf("%s via %s at BIRD after %v", prefix, nextHop, took)
	}
	waitAttributes(t, r, "2001:db8:100::/120", map[string]string{"BGP.community": "(64512,600)"})
	if rs, err := r.Routes(ctx, "2001:db8:100::10/128"); err != nil || len(rs) != 0 {
		t.Errorf("2001:db8:100::10/128 reached BIRD as its own route (%v, %v), want only the aggregate", rs, err)
	}

	if err := s.Announce(ctx, prefixes("203.0.113.10/32")); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"2001:db8:100::/120", "2001:db8:200::7/128"} {
		if routes, _, err := r.WaitRoutes(ctx, prefix, 15*time.Second, func(rs []birdlab.Route) bool { return len(rs) == 0 }); err != nil {
			t.Fatalf("%s not withdrawn: %v (BIRD has %v)", prefix, err, routes)
		}
	}
	if rs, err := r.Routes(ctx, "203.0.113.10/32"); err != nil || len(rs) != 1 {
		t.Fatalf("the IPv4 VIP went with the IPv6 ones: %v, %v", rs, err)
	}
}
