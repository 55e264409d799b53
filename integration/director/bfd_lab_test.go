//go:build lab

package director_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestBFDLinkCutKeepsStreams (issue 26, item 3), with the real tlb
// binary: two directors run BFD with BIRD (100 ms x 5); while 100 streams
// run, director1's link is cut (every packet in and out dropped, its tlb
// left running). BIRD's BFD drops director1 well before the 3 s hold
// time, and every stream continues through director2: none is reset.
func TestBFDLinkCutKeepsStreams(t *testing.T) {
	d := buildDCWith(t, dcOptions{bfd: true})
	ctx := context.Background()
	d.startBoth(t)
	waitUntil(t, 60*time.Second, "BFD Up in BIRD with both directors", func() bool {
		ss, err := d.bird.BFDSessions(ctx)
		if err != nil || len(ss) != 2 {
			return false
		}
		return ss[0].State == "Up" && ss[1].State == "Up"
	})

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ss, wg := d.openSpreadStreams(sctx, t, streams, "cut")
	d.dropAllTraffic(t, 0, "cut")
	cutAt := time.Now()
	_, gone, err := d.bird.WaitRoutes(ctx, vipSubnet, 30*time.Second, hasNextHops(d.directorAddr[1]))
	if err != nil {
		t.Fatalf("bird never dropped the cut director: %v", err)
	}
	t.Logf("BIRD dropped the cut director %v after the cut (BFD 100ms x 5; hold time 3s)", gone.Round(time.Millisecond))
	if msg, err := d.bird.LastError(ctx, d.directors[0].Name); err != nil || !strings.Contains(msg, "BFD session down") {
		t.Errorf("bird's last error for %s: %q (%v), want BFD session down", d.directors[0].Name, msg, err)
	}
	if gone > 2*time.Second {
		t.Errorf("cut director dropped after %v, not well before the 3s hold time: not BFD's doing", gone)
	}
	var recovered time.Time
	waitUntil(t, 60*time.Second, "every stream exchanged data after the cut", func() bool {
		if allProgressedSince(ss, cutAt) {
			recovered = time.Now()
			return true
		}
		return false
	})
	stop()
	wg.Wait()
	n, first := broken(ss)
	t.Logf("streams: %d held, %d broken (first error: %v); all progressing again %v after the cut",
		streams, n, first, recovered.Sub(cutAt).Round(time.Millisecond))
	t.Logf("BENCH bgp_bfd_link_cut_withdraw_ms %d ms", gone.Milliseconds())
	t.Logf("BENCH bgp_bfd_link_cut_streams_broken %d count", n)
	if n > 0 {
		d.diagnose(t)
		t.Errorf("%d of %d streams broke after the link cut; first: %v", n, streams, first)
	}
}
