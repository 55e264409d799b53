//go:build lab

package director_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp/birdlab"
)

const streams = 100

// TestAnnounceOnReadyThenSurviveKill (issue 3, items 1 and 2), with the
// real tlb binary doing IPVS, health and BGP:
//  1. directors whose gateways all fail their health checks hold BGP
//     sessions but announce nothing; when the gateways turn healthy, each
//     director's VIP range appears in BIRD with it as next hop within a
//     second of its /readyz turning ready; new flows from many client
//     ports spread over both directors;
//  2. director1 dies silently (blackholed, then tlb SIGKILLed) while 100
//     streams run: BIRD drops it by the hold timer and every stream
//     continues; none is reset.
func TestAnnounceOnReadyThenSurviveKill(t *testing.T) {
	d := buildDC(t)
	ctx := context.Background()

	// Start both directors with every gateway failing its health check:
	// sessions come up, nothing is announced (not ready).
	d.healthy[0].Store(false)
	d.healthy[1].Store(false)
	d.startDirector(t, 0)
	d.startDirector(t, 1)
	waitUntil(t, 90*time.Second, "both BGP sessions Established in BIRD", func() bool {
		for _, dir := range d.directors {
			if s, err := d.bird.Session(ctx, dir.Name); err != nil || s.State != "Established" {
				return false
			}
		}
		return true
	})
	for i := range d.directors {
		waitUntil(t, 30*time.Second, d.directors[i].Name+" is up but not ready", func() bool {
			code, body, err := d.get(i, "/readyz")
			return err == nil && code == 503 && strings.Contains(body, "none of 2 real servers is healthy")
		})
	}
	if rs, err := d.bird.Routes(ctx, vipSubnet); err != nil || len(rs) != 0 {
		t.Fatalf("BIRD has %v (err %v) from directors that are not ready, want nothing", rs, err)
	}

	// The gateways become healthy: each director turns ready; measure
	// from its /readyz turning 200 to its next hop in BIRD.
	readyAt := make([]time.Time, len(d.directors))
	var pollers sync.WaitGroup
	for i := range d.directors {
		pollers.Go(func() {
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if code, _, err := d.get(i, "/readyz"); err == nil && code == 200 {
					readyAt[i] = time.Now()
					return
				}
			}
		})
	}
	d.healthy[0].Store(true)
	d.healthy[1].Store(true)
	routeAt := make([]time.Time, len(d.directors))
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && (routeAt[0].IsZero() || routeAt[1].IsZero()); time.Sleep(10 * time.Millisecond) {
		rs, _ := d.bird.Routes(ctx, vipSubnet)
		for i, a := range d.directorAddr {
			if routeAt[i].IsZero() && slices.ContainsFunc(rs, func(r birdlab.Route) bool { return r.NextHop == a }) {
				routeAt[i] = time.Now()
			}
		}
	}
	pollers.Wait()
	for i, dir := range d.directors {
		if readyAt[i].IsZero() || routeAt[i].IsZero() {
			d.diagnose(t)
			t.Fatalf("%s: ready at %v, in BIRD at %v: one never happened", dir.Name, readyAt[i], routeAt[i])
		}
		// Both are polled (HTTP every 10ms, birdc in a loop); a route seen
		// before /readyz's poll answered counts as 0.
		lat := max(routeAt[i].Sub(readyAt[i]), 0)
		t.Logf("%s: /readyz 200 -> %s via %s in BIRD after %v", dir.Name, vipSubnet, d.directorAddr[i], lat.Round(time.Millisecond))
		t.Logf("BENCH director_ready_to_route_ms_%s %d ms", dir.Name, lat.Milliseconds())
		if lat > time.Second {
			t.Errorf("%s: route in BIRD %v after readiness, want within 1s", dir.Name, lat)
		}
	}
	want := d.directorAddr
	if _, _, err := d.bird.WaitRoutes(ctx, vipSubnet, 10*time.Second, hasNextHops(want...)); err != nil {
		t.Fatalf("both directors as next hops: %v", err)
	}
	out, _ := d.bird.Birdc(ctx, "show", "route", vipSubnet, "all")
	t.Logf("birdc show route %s all:\n%s", vipSubnet, out)
	d.waitKernelNextHops(t, 2)

	// 1b. New flows from many client ports spread over both directors.
	for i := range 60 {
		if err := d.request(); err != nil {
			d.diagnose(t)
			t.Fatalf("request %d through the VIP: %v", i, err)
		}
	}
	spread := []int{d.ipvsConns(0, ""), d.ipvsConns(1, "")}
	t.Logf("60 short connections: IPVS connection entries per director %v", spread)
	if spread[0] == 0 || spread[1] == 0 {
		t.Errorf("ECMP did not spread 60 client ports over both directors: %v", spread)
	}

	// 2. 100 long-lived streams, then director1 dies silently.
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ss, wg := d.openSpreadStreams(sctx, t, streams, "kill")
	// As if powered off: drop everything in and out of director1 (so BIRD
	// gets no FIN and must use its hold timer), then SIGKILL tlb.
	d.dropAllTraffic(t, 0, "dead")
	killAt := time.Now()
	if err := d.tlb[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, detect, err := d.bird.WaitRoutes(ctx, vipSubnet, 30*time.Second, hasNextHops(d.directorAddr[1]))
	if err != nil {
		t.Fatalf("bird never dropped the dead director: %v", err)
	}
	t.Logf("BIRD dropped the dead director %v after the kill (hold time 3s)", detect.Round(time.Millisecond))
	if detect > 5*time.Second { // the 3s hold time, plus slack for birdc polling in the emulated VM
		t.Errorf("dead director detected after %v, want within the 3s hold time (+2s slack)", detect)
	}
	var recovered time.Time
	waitUntil(t, 60*time.Second, "every stream exchanged data after the kill", func() bool {
		if allProgressedSince(ss, killAt) {
			recovered = time.Now()
			return true
		}
		return false
	})
	time.Sleep(2 * time.Second)
	stop()
	wg.Wait()
	n, first := broken(ss)
	t.Logf("streams: %d held, %d broken (first error: %v); all progressing again %v after the kill",
		streams, n, first, recovered.Sub(killAt).Round(time.Millisecond))
	t.Logf("BENCH bgp_dead_director_detect_ms %d ms", detect.Milliseconds())
	t.Logf("BENCH bgp_kill_recovery_ms %d ms", recovered.Sub(killAt).Milliseconds())
	t.Logf("BENCH bgp_streams_broken %d count", n)
	if n > 0 {
		d.diagnose(t)
		t.Errorf("%d of %d streams broke after the SIGKILL; first: %v", n, streams, first)
	}
}
