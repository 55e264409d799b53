// Command bgpbench measures how fast a VIP prefix handed to the bgp
// Speaker appears in (and leaves) a real BIRD 2 router's table.
//
// It builds a two-namespace lab (never touching the root namespace),
// re-runs itself inside the directors' namespace, peers one Speaker with
// BIRD and times N announce/withdraw cycles, polling birdc; then it times
// a cut link until the route leaves BIRD, with BFD and with the hold time
// alone (linkloss.go). It ends with BENCH lines. Needs root, bird, birdc
// and nft.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/bgp/birdlab"
)

func main() {
	n := flag.Int("n", 30, "announce/withdraw cycles")
	cuts := flag.Int("cuts", 5, "link cuts timed with BFD")
	verbose := flag.Bool("v", false, "log the speaker")
	flag.Parse()
	if err := run(*n, *cuts, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "bgpbench:", err)
		os.Exit(1)
	}
}

func run(n, cuts int, verbose bool) error {
	lab := birdlab.FromEnv()
	if lab == nil {
		l, err := birdlab.Setup(context.Background(), fmt.Sprintf("tlbbench%d", os.Getpid()), 1)
		if err != nil {
			return err
		}
		code, err := l.Enter()
		l.Teardown()
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("benchmark in namespace %s exited %d", l.Directors, code)
		}
		return nil
	}
	if err := bench(lab, n, verbose); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bgpbench-linkloss")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	out := io.Discard
	if verbose {
		out = os.Stderr
	}
	return linkLoss(context.Background(), lab, dir, cuts, slog.New(slog.NewTextHandler(out, nil)))
}

func bench(lab *birdlab.Lab, n int, verbose bool) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bgpbench")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	router, err := lab.StartRouter(ctx, dir, birdlab.RouterConfig{ASN: 64500, Neighbors: []birdlab.Neighbor{
		{Name: "director0", Address: lab.DirectorAddrs[0], ASN: 64512},
	}})
	if err != nil {
		return err
	}
	defer router.Stop()

	out := io.Discard
	if verbose {
		out = os.Stderr
	}
	sp, err := bgp.NewSpeaker(bgp.Config{
		LocalASN: 64512, RouterID: lab.DirectorAddrs[0], AllowedPrefixes: []string{"203.0.113.0/24"},
		Peers: []bgp.PeerConfig{{Address: lab.RouterAddr, ASN: 64500, LocalAddress: lab.DirectorAddrs[0]}},
	}, slog.New(slog.NewTextHandler(out, nil)), nil)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := sp.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = sp.Stop(ctx) }()
	for !sp.Established() {
		if time.Since(start) > 30*time.Second {
			return fmt.Errorf("session not established after 30s: %v", sp.Peers())
		}
		time.Sleep(5 * time.Millisecond)
	}
	establish := time.Since(start)

	subnet := "203.0.113.0/24"
	p := []netip.Prefix{netip.MustParsePrefix(subnet)}
	var up, down []time.Duration
	for i := range n {
		t0 := time.Now()
		if err := sp.Announce(ctx, p); err != nil {
			return err
		}
		if _, _, err := router.WaitRoutes(ctx, subnet, 5*time.Second, func(rs []birdlab.Route) bool { return len(rs) == 1 }); err != nil {
			return fmt.Errorf("cycle %d: %w", i, err)
		}
		up = append(up, time.Since(t0))
		t1 := time.Now()
		if err := sp.Announce(ctx, nil); err != nil {
			return err
		}
		if _, _, err := router.WaitRoutes(ctx, subnet, 5*time.Second, func(rs []birdlab.Route) bool { return len(rs) == 0 }); err != nil {
			return fmt.Errorf("cycle %d: %w", i, err)
		}
		down = append(down, time.Since(t1))
	}
	fmt.Printf("cycles=%d session_establish=%v (includes BIRD's connect delay)\n", n, establish.Round(time.Millisecond))
	fmt.Printf("announce->route in bird: p50=%v p99=%v max=%v\n", pct(up, 50), pct(up, 99), pct(up, 100))
	fmt.Printf("withdraw->route gone:    p50=%v p99=%v max=%v\n", pct(down, 50), pct(down, 99), pct(down, 100))
	fmt.Println("note: times include polling birdc (each poll is one birdc exec); the director's config-to-Announce step is not included")
	fmt.Printf("BENCH bgp_announce_to_route_ms %.1f ms\n", ms(pct(up, 50)))
	fmt.Printf("BENCH bgp_announce_to_route_p99_ms %.1f ms\n", ms(pct(up, 99)))
	fmt.Printf("BENCH bgp_withdraw_to_gone_ms %.1f ms\n", ms(pct(down, 50)))
	fmt.Printf("BENCH bgp_withdraw_to_gone_p99_ms %.1f ms\n", ms(pct(down, 99)))
	return nil
}

// pct returns the q-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, q int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (q*len(s)+99)/100 - 1
	i = max(0, min(i, len(s)-1))
	return s[i].Round(10 * time.Microsecond)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
