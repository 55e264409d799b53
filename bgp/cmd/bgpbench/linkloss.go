package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/bgp/bfd"
	"github.com/tlbproject/tlb/bgp/birdlab"
)

// linkLoss times how long after the director's link is cut (every packet
// dropped, the interface left up) its route leaves BIRD: n times with BFD
// on both sides (defaults, 100 ms x 5), once with the BGP hold time alone
// (the shipped 3 s), and prints both.
func linkLoss(ctx context.Context, lab *birdlab.Lab, dir string, n int, log *slog.Logger) error {
	withBFD, err := cutCycles(ctx, lab, filepath.Join(dir, "bfd"), true, n, log)
	if err != nil {
		return fmt.Errorf("link loss with bfd: %w", err)
	}
	holdOnly, err := cutCycles(ctx, lab, filepath.Join(dir, "hold"), false, 1, log)
	if err != nil {
		return fmt.Errorf("link loss with the hold time alone: %w", err)
	}
	fmt.Printf("link cut->route gone, bfd 100ms x 5: p50=%v max=%v (%d cuts)\n", pct(withBFD, 50), pct(withBFD, 100), n)
	fmt.Printf("link cut->route gone, hold time %ds alone: %v\n", bgp.DefaultHoldTimeSeconds, pct(holdOnly, 50))
	fmt.Printf("BENCH bgp_link_loss_withdraw_ms %.1f ms\n", ms(pct(withBFD, 50)))
	fmt.Printf("BENCH bgp_link_loss_withdraw_max_ms %.1f ms\n", ms(pct(withBFD, 100)))
	fmt.Printf("BENCH bgp_link_loss_withdraw_hold_time_ms %.1f ms\n", ms(pct(holdOnly, 50)))
	return nil
}

// cutCycles peers a speaker with BIRD (both with BFD when withBFD), then n
// times: cuts the link, times until the route is gone, heals it and waits
// for the route to return.
func cutCycles(ctx context.Context, lab *birdlab.Lab, dir string, withBFD bool, n int, log *slog.Logger) ([]time.Duration, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	rc := birdlab.RouterConfig{ASN: 64500, Neighbors: []birdlab.Neighbor{
		{Name: "director0", Address: lab.DirectorAddrs[0], ASN: 64512, BFD: withBFD},
	}}
	peer := bgp.PeerConfig{Address: lab.RouterAddr, ASN: 64500, LocalAddress: lab.DirectorAddrs[0]}
	if withBFD {
		rc.BFD = &birdlab.BFD{MinRxMilliseconds: 100, MinTxMilliseconds: 100, Multiplier: 5}
		peer.BFD = bgp.BFDConfig{Enabled: true}
	}
	router, err := lab.StartRouter(ctx, dir, rc)
	if err != nil {
		return nil, err
	}
	defer router.Stop()
	sp, err := bgp.NewSpeaker(bgp.Config{
		LocalASN: 64512, RouterID: lab.DirectorAddrs[0], AllowedPrefixes: []string{"203.0.113.0/24"}, Peers: []bgp.PeerConfig{peer},
	}, log, nil)
	if err != nil {
		return nil, err
	}
	if err := sp.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = sp.Stop(ctx) }()
	const subnet = "203.0.113.0/24"
	if err := waitFor(60*time.Second, "session established", sp.Established); err != nil {
		return nil, err
	}
	if err := sp.Announce(ctx, []netip.Prefix{netip.MustParsePrefix(subnet)}); err != nil {
		return nil, err
	}
	var took []time.Duration
	for i := range n {
		if _, _, err := router.WaitRoutes(ctx, subnet, 60*time.Second, func(rs []birdlab.Route) bool { return len(rs) == 1 }); err != nil {
			return nil, fmt.Errorf("cut %d: route not in bird: %w", i, err)
		}
		if withBFD {
			if err := waitFor(60*time.Second, "bfd up", func() bool { b := sp.BFD(); return len(b) == 1 && b[0].State == bfd.Up }); err != nil {
				return nil, err
			}
		}
		heal, err := lab.CutDirectors(ctx)
		if err != nil {
			return nil, err
		}
		_, d, err := router.WaitRoutes(ctx, subnet, 30*time.Second, func(rs []birdlab.Route) bool { return len(rs) == 0 })
		if herr := heal(); herr != nil {
			return nil, herr
		}
		if err != nil {
			return nil, fmt.Errorf("cut %d: %w", i, err)
		}
		took = append(took, d)
	}
	return took, nil
}

// waitFor polls ok until it holds or timeout passes.
func waitFor(timeout time.Duration, what string, ok func() bool) error {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok() {
			return nil
		}
	}
	return fmt.Errorf("timed out after %v waiting for %s", timeout, what)
}
