//go:build !lab

package bgp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp"
)

// TestRouteAppearsInBIRDWithinASecond: an announced VIP subnet is in
// BIRD's table with the director as next hop within a second, and is gone
// after the director withdraws it.
func TestRouteAppearsInBIRDWithinASecond(t *testing.T) {
	l := needLab(t)
	r := startRouter(t, l, neighbors(l, 1))
	s := startSpeaker(t, speakerConfig(l, 0))
	waitEstablished(t, r, director(0), 20*time.Second)
	ctx := context.Background()

	if err := s.Announce(ctx, prefixes(vipSubnet)); err != nil {
		t.Fatal(err)
	}
	rs, took, err := r.WaitRoutes(ctx, vipSubnet, time.Second, hasNextHops(l.DirectorAddrs[0]))
	if err != nil {
		t.Fatalf("announce: %v", err)
	}
	t.Logf("route %s via %s in bird after %v", vipSubnet, rs[0].NextHop, took)

	if err := s.Announce(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, took, err := r.WaitRoutes(ctx, vipSubnet, time.Second, none); err != nil {
		t.Fatalf("withdraw: %v", err)
	} else {
		t.Logf("route withdrawn from bird after %v", took)
	}
}

// TestForeignPrefixNeverReachesBIRD: Announce refuses a prefix outside the
// allowed range; and even a path pushed straight into GoBGP through its
// (loopback) gRPC API is stopped by the export policy.
func TestForeignPrefixNeverReachesBIRD(t *testing.T) {
	l := needLab(t)
	r := startRouter(t, l, neighbors(l, 1))
	cfg := speakerConfig(l, 0)
	cfg.API = bgp.APIConfig{Enabled: true, Address: "127.0.0.1:50071"}
	s := startSpeaker(t, cfg)
	waitEstablished(t, r, director(0), 20*time.Second)
	ctx := context.Background()

	const foreign = "192.0.2.0/24"
	if err := s.Announce(ctx, prefixes(vipSubnet, foreign)); !errors.Is(err, bgp.ErrNotAllowed) {
		t.Fatalf("Announce with %s: error = %v, want ErrNotAllowed", foreign, err)
	}
	addPathViaAPI(t, cfg.API.Address, foreign, l.DirectorAddrs[0])
	// Sentinel: an allowed announce after both. Updates on one session
	// arrive in order, so once it is in BIRD a leaked foreign route would be too.
	if err := s.Announce(ctx, prefixes(vipSubnet)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.WaitRoutes(ctx, vipSubnet, 2*time.Second, hasNextHops(l.DirectorAddrs[0])); err != nil {
		t.Fatal(err)
	}
	if rs, err := r.Routes(ctx, foreign); err != nil || len(rs) != 0 {
		t.Fatalf("bird has %v for %s (err %v), want nothing", rs, foreign, err)
	}
	all, err := r.Birdc(ctx, "show", "route", "protocol", director(0), "count")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(all, "1 of 1 routes") {
		t.Errorf("bird route count: %s, want exactly the one VIP route from the director", all)
	}
}

// TestECMPAcrossTwoDirectors: two directors announce the same subnet;
// BIRD keeps both and installs one multipath kernel route.
func TestECMPAcrossTwoDirectors(t *testing.T) {
	l := needLab(t)
	r := startRouter(t, l, neighbors(l, 2))
	s0 := startSpeaker(t, speakerConfig(l, 0))
	s1 := startSpeaker(t, speakerConfig(l, 1))
	waitEstablished(t, r, director(0), 20*time.Second)
	waitEstablished(t, r, director(1), 20*time.Second)
	ctx := context.Background()
	for _, s := range []*bgp.Speaker{s0, s1} {
		if err := s.Announce(ctx, prefixes(vipSubnet)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := r.WaitRoutes(ctx, vipSubnet, 2*time.Second, hasNextHops(l.DirectorAddrs[0], l.DirectorAddrs[1])); err != nil {
		t.Fatal(err)
	}
	kr := waitKernelRoute(t, l.KernelRoute, vipSubnet, func(s string) bool {
		return strings.Contains(s, "nexthop via "+l.DirectorAddrs[0]) && strings.Contains(s, "nexthop via "+l.DirectorAddrs[1])
	})
	t.Logf("router kernel route:\n%s", kr)

	// One director stops: its next hop leaves both tables.
	if err := s1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.WaitRoutes(ctx, vipSubnet, 2*time.Second, hasNextHops(l.DirectorAddrs[0])); err != nil {
		t.Fatal(err)
	}
	waitKernelRoute(t, l.KernelRoute, vipSubnet, func(s string) bool {
		return strings.Contains(s, "via "+l.DirectorAddrs[0]) && !strings.Contains(s, l.DirectorAddrs[1])
	})
}

func waitKernelRoute(t *testing.T, get func(context.Context, string) (string, error), prefix string, ok func(string) bool) string {
	t.Helper()
	var last string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s, err := get(context.Background(), prefix)
		if err != nil {
			t.Fatal(err)
		}
		if last = s; ok(s) {
			return s
		}
	}
	t.Fatalf("router kernel route for %s = %q", prefix, last)
	return ""
}
