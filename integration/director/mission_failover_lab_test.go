//go:build lab

package director_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/gatewaylab"
)

// gatewayDrained: gateway1's Envoy drained by the pod's preStop hook
// while a client load runs. The directors see /ready fail and set
// gateway1 to weight 0 while the drain still runs; it accepts no new
// connection after; Envoy then stops. Not one request fails.
func (m *mission) gatewayDrained(t *testing.T) {
	ctx := context.Background()
	g1, gw1, gw2 := m.gws[0], m.d.gatewayAddr[0], m.d.gatewayAddr[1]
	var l load
	var mu sync.Mutex
	through := map[string]int{}
	lctx, stop := context.WithCancel(ctx)
	wg := l.run(lctx, 4, func() error {
		a, err := gatewaylab.Get(lctx, m.https, gatewaylab.Route{Host: gatewaylab.ShopHost, Path: "/", Upstream: "web"})
		if err == nil {
			mu.Lock()
			through[a.Gateway]++
			mu.Unlock()
		}
		return err
	})
	defer func() { stop(); wg.Wait() }()
	count := func(gw string) int {
		mu.Lock()
		defer mu.Unlock()
		return through[gw]
	}
	waitUntil(t, 60*time.Second, "the load is answered through both gateways", func() bool { return count(gw1) > 0 && count(gw2) > 0 })

	// The kubelet's order: the preStop hook (l7 drain), then SIGTERM.
	type drainEnd struct {
		err         error
		took        time.Duration
		accepted    int // Envoy's accepted connections when the drain returned
		acceptedErr error
	}
	drainAt := time.Now()
	drained := make(chan drainEnd, 1)
	go func() {
		var e drainEnd
		e.err = g1.Drain(ctx)
		e.took = time.Since(drainAt)
		e.accepted, e.acceptedErr = gatewaylab.Accepted(ctx, g1)
		g1.Stop()
		drained <- e
	}()
	weight0 := make([]time.Duration, len(m.d.directors))
	waitUntil(t, 60*time.Second, "both directors set gateway1 to weight 0", func() bool {
		done := true
		for i := range m.d.directors {
			if weight0[i] == 0 {
				if m.d.weightsOf(i, vip+":443")[gw1] != "0" || m.d.weightsOf(i, vip+":80")[gw1] != "0" {
					done = false
					continue
				}
				weight0[i] = time.Since(drainAt)
			}
		}
		return done
	})
	acceptedAtWeight0, weight0Err := gatewaylab.Accepted(ctx, g1)
	var end drainEnd
	select {
	case end = <-drained:
	case <-time.After(2 * time.Minute):
		t.Fatal("the preStop drain of gateway1 did not return within 2 minutes")
	}
	if end.err != nil {
		t.Fatalf("preStop drain of gateway1: %v", end.err)
	}
	okAtStop := l.ok.Load()
	waitUntil(t, 60*time.Second, "20 more requests answered after gateway1's Envoy stopped", func() bool { return l.ok.Load() >= okAtStop+20 })
	stop()
	wg.Wait()

	for i, w := range weight0 {
		t.Logf("director%d set gateway1 to weight 0 %v after the drain began", i+1, w.Round(time.Millisecond))
		t.Logf("BENCH mission_drain_to_weight0_ms_director%d %d ms", i+1, w.Milliseconds())
		if w >= end.took {
			t.Errorf("director%d set gateway1 to weight 0 %v after the drain began, when the preStop drain had already returned (%v) and Envoy was being stopped: the L4 tier must stop new flows first", i+1, w, end.took)
		}
	}
	t.Logf("the preStop drain returned %v after it began; Envoy was then stopped", end.took.Round(time.Millisecond))
	t.Logf("BENCH mission_drain_took_ms %d ms", end.took.Milliseconds())
	switch {
	case weight0Err != nil || end.acceptedErr != nil:
		t.Errorf("gateway1's accepted connections at weight 0 (%v) and when the drain returned (%v): both must be readable, Envoy must still run at weight 0", weight0Err, end.acceptedErr)
	case end.accepted != acceptedAtWeight0:
		t.Errorf("gateway1's Envoy accepted %d connections after both directors set it to weight 0", end.accepted-acceptedAtWeight0)
	default:
		t.Logf("gateway1's Envoy accepted no connection between weight 0 on both directors and the drain's end")
	}
	t.Logf("load: %d requests answered (through gateway1 %d, gateway2 %d), %d failed (first error: %v)", l.ok.Load(), count(gw1), count(gw2), l.failed.Load(), l.firstErr)
	t.Logf("BENCH mission_drain_failed_requests %d count", l.failed.Load())
	if l.failed.Load() != 0 {
		t.Errorf("%d requests failed while gateway1 drained and stopped; first: %v", l.failed.Load(), l.firstErr)
	}
}

// directorKilled: director1 dies during 20 HTTPS downloads through Envoy;
// every download completes intact.
func (m *mission) directorKilled(t *testing.T) {
	const (
		downloads = 20
		size      = 2 << 20
		// 64 chunks of 32 KiB every 100 ms: 6.4 s per download, in flight
		// while director1 dies and BIRD's 3 s hold timer runs out.
		pace = "100ms"
	)
	ctx := context.Background()
	client := gatewaylab.Client(m.d.client, vip+":443", m.site.CA, false)
	client.Timeout = 5 * time.Minute
	var flows gatewaylab.Flows
	flows.Track(client)
	url := fmt.Sprintf("https://%s/download?size=%d&pace=%s", gatewaylab.MediaHost, size, pace)
	results := make([]gatewaylab.Download, downloads)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range downloads {
		wg.Go(func() { results[i] = gatewaylab.Fetch(ctx, client, url, size) })
	}
	var per [2]int
	waitUntil(t, 60*time.Second, "every download connected, some through director1", func() bool {
		per = [2]int{m.d.ipvsConnsTo(0, vip+":443", "ESTABLISHED", flows.Has), m.d.ipvsConnsTo(1, vip+":443", "ESTABLISHED", flows.Has)}
		return per[0] > 0 && per[0]+per[1] >= downloads
	})
	t.Logf("downloads in flight per director (IPVS ESTABLISHED entries): director1 %d, director2 %d", per[0], per[1])

	// As if powered off: drop everything in and out of director1 (BIRD
	// gets no goodbye and must use its hold timer), then SIGKILL tlb.
	m.d.directors[0].Run(t, "nft", "add table inet dead; "+
		"add chain inet dead drop_input { type filter hook input priority -300; policy drop; }; "+
		"add chain inet dead drop_output { type filter hook output priority -300; policy drop; }")
	killAt := time.Now()
	if err := m.d.tlb[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, detect, err := m.d.bird.WaitRoutes(ctx, vipSubnet, 30*time.Second, hasNextHops(m.d.directorAddr[1]))
	if err != nil {
		t.Fatalf("BIRD never dropped the dead director: %v", err)
	}
	t.Logf("BIRD dropped director1 %v after the kill (hold time 3 s)", detect.Round(time.Millisecond))
	wg.Wait()
	failed := 0
	servedBy := map[string]int{}
	for i, r := range results {
		servedBy[r.Answer]++
		if r.Err != nil {
			failed++
			t.Errorf("download %d: %d of %d bytes: %v", i+1, r.Bytes, size, r.Err)
		}
	}
	t.Logf("%d downloads of %d MiB through Envoy: %d complete and intact, %d failed; %v after they started, %v after the kill; served by %v",
		downloads, size>>20, downloads-failed, failed, time.Since(start).Round(100*time.Millisecond), time.Since(killAt).Round(100*time.Millisecond), servedBy)
	t.Logf("BENCH mission_director_kill_failed_downloads %d count", failed)
	m.repliesDirect(t, 1)
}
