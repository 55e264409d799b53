//go:build lab

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/gatewaylab"
)

// drainTimeout is the directors' --gateway-drain-timeout in the lab.
const drainTimeout = 20 * time.Second

// drain: `tlb drain gateway1` under a load of new connections and with
// downloads in flight. gateway1 goes to weight 0; its downloads complete
// byte for byte; no request fails; its real server leaves IPVS after the
// downloads have ended, within the drain timeout; `tlb undrain` brings it
// back at weight 1.
func (h *healthDC) drain(t *testing.T) {
	gw1 := h.gatewayAddr[0]
	load := h.startLoad(t, 2)
	waitFor(t, time.Minute, "the load is answered through both gateways", func() bool {
		return load.count(gw1) > 0 && load.count(h.gatewayAddr[1]) > 0
	})
	// Downloads of 3.2 s each (32 chunks, one every 100 ms), each a
	// flow; Maglev puts some on gateway1.
	const downloads, size, pace = 8, 32 * gatewaylab.DownloadChunk, "100ms"
	url := fmt.Sprintf("https://%s/download?size=%d&pace=%s", gatewaylab.MediaHost, size, pace)
	results := make([]gatewaylab.Download, downloads)
	ended := make([]time.Time, downloads)
	var wg sync.WaitGroup
	for i := range downloads {
		wg.Go(func() {
			results[i] = gatewaylab.Fetch(context.Background(), h.https, url, size)
			ended[i] = time.Now()
		})
	}
	// Connected: IPVS holds their established flows.
	waitFor(t, 30*time.Second, "the downloads hold established flows to gateway1", func() bool {
		return h.activeTo(gw1) > 0
	})

	cliAt := time.Now()
	t.Logf("%s", h.tlbCLI(t, "drain", h.gateways[0].Name))
	drainAt := time.Now() // the annotation is written
	var zeroAfter time.Duration
	waitFor(t, 30*time.Second, "gateway1 at weight 0", func() bool {
		w, ok := h.weights()[gw1]
		zeroAfter = time.Since(drainAt)
		return ok && w == 0
	})
	wg.Wait()
	var lastOnGW1 time.Time
	onGW1 := 0
	for i, d := range results {
		a, _ := gatewaylab.ParseAnswer(d.Answer)
		if d.Err != nil {
			t.Errorf("download %d (%s) failed after %d bytes: %v", i, d.Answer, d.Bytes, d.Err)
			continue
		}
		if a.Gateway == gw1 {
			onGW1++
			if ended[i].After(lastOnGW1) {
				lastOnGW1 = ended[i]
			}
		}
	}
	// IPVS counts connections as active by the client's packets only
	// (direct return): one whose end it did not see stays ESTABLISHED
	// for its 15 min timer, so the drain may end at its timeout
	// (drainTimeout here) rather than at a count of 0.
	var removedAt time.Time
	var activeLeft int
	waitFor(t, drainTimeout+30*time.Second, "gateway1's real server removed from IPVS", func() bool {
		if _, ok := h.weights()[gw1]; !ok {
			removedAt = time.Now()
			return true
		}
		activeLeft = h.activeTo(gw1)
		return false
	})
	outs := load.end()
	loadFailed, afterZeroOnGW1 := 0, 0
	for _, o := range outs {
		if o.err != nil {
			loadFailed++
			t.Errorf("request begun %v after the drain failed: %v", o.began.Sub(drainAt).Round(time.Millisecond), o.err)
		}
		if o.err == nil && o.gateway == gw1 && o.began.After(drainAt.Add(zeroAfter)) {
			afterZeroOnGW1++
		}
	}
	t.Logf("drain: `tlb drain` took %v; weight 0 %v after it returned; %d of %d downloads were on gateway1 and completed (last %v after the drain); real server removed %v after the drain (timeout %v), %v after its last download ended, IPVS still counting %d active connections to it just before; %d requests, %d failed, %d reached gateway1 after weight 0",
		drainAt.Sub(cliAt).Round(time.Millisecond), zeroAfter.Round(time.Millisecond), onGW1, downloads, lastOnGW1.Sub(drainAt).Round(time.Millisecond),
		removedAt.Sub(drainAt).Round(time.Millisecond), drainTimeout, removedAt.Sub(lastOnGW1).Round(time.Millisecond), activeLeft, len(outs), loadFailed, afterZeroOnGW1)
	t.Logf("BENCH drain_weight_zero_ms %d ms", zeroAfter.Milliseconds())
	t.Logf("BENCH drain_removed_after_flows_ended_ms %d ms", removedAt.Sub(lastOnGW1).Milliseconds())
	t.Logf("BENCH drain_failed_requests %d", loadFailed)
	if onGW1 == 0 {
		t.Errorf("none of %d downloads went through gateway1: the drain kept no flow", downloads)
	}
	if removedAt.Before(lastOnGW1) {
		t.Errorf("gateway1 removed %v before its last download ended", lastOnGW1.Sub(removedAt))
	}
	// Removed once its connections ended or at the timeout, whichever
	// came first (plus a few drain polls on the emulated CPUs).
	if d := removedAt.Sub(drainAt); d > drainTimeout+10*time.Second {
		t.Errorf("gateway1 removed %v after the drain, want within the %v timeout", d, drainTimeout)
	}
	if afterZeroOnGW1 > 0 {
		t.Errorf("%d new connections reached gateway1 after it was at weight 0", afterZeroOnGW1)
	}

	undrainAt := time.Now()
	t.Logf("%s", h.tlbCLI(t, "undrain", h.gateways[0].Name))
	waitFor(t, 30*time.Second, "gateway1 back at weight 1", func() bool { return h.weights()[gw1] == 1 })
	t.Logf("undrain: gateway1 back at weight 1 %v after `tlb undrain` began", since(undrainAt))
}

// envoyKilled: gateway1's Envoy SIGKILLed under a load of new
// connections. The director's probes of its :9902/ready fail and it goes
// to weight 0 within 3 s; GTM counts one healthy gateway; no connection
// begun after weight 0 fails.
func (h *healthDC) envoyKilled(t *testing.T) {
	gw1 := h.gatewayAddr[0]
	load := h.startLoad(t, 2)
	waitFor(t, time.Minute, "the load is answered through both gateways", func() bool {
		return load.count(gw1) > 0 && load.count(h.gatewayAddr[1]) > 0
	})
	h.gws[0].Kill()
	killed := time.Now()
	var zero time.Time // when weight 0 was seen (checked every 100 ms)
	waitFor(t, 30*time.Second, "gateway1 at weight 0 after its Envoy was killed", func() bool {
		w, ok := h.weights()[gw1]
		zero = time.Now()
		return ok && w == 0
	})
	took := zero.Sub(killed)
	// A few seconds of new connections after weight 0.
	waitFor(t, 30*time.Second, "50 requests begun after weight 0", func() bool {
		load.mu.Lock()
		defer load.mu.Unlock()
		n := 0
		for _, o := range load.outcomes {
			if o.began.After(zero) {
				n++
			}
		}
		return n >= 50
	})
	outs := load.end()
	before, after, failedBefore, failedAfter := 0, 0, 0, 0
	for _, o := range outs {
		switch {
		case o.began.After(zero):
			after++
			if o.err != nil {
				failedAfter++
				t.Errorf("request begun %v after weight 0 failed: %v", o.began.Sub(zero).Round(time.Millisecond), o.err)
			}
		case o.began.After(killed):
			before++
			if o.err != nil {
				failedBefore++
			}
		}
	}
	code, line := h.gtm(t, "/vip/"+gatewayVIP)
	t.Logf("envoy-killed: weight 0 %v after the kill (probes every 500ms, fall 3); between kill and weight 0 %d requests began, %d failed; after weight 0 %d began, %d failed; GTM %d %q",
		took.Round(time.Millisecond), before, failedBefore, after, failedAfter, code, strings.TrimSpace(line))
	t.Logf("BENCH envoy_killed_to_weight_zero_ms %d ms", took.Milliseconds())
	t.Logf("BENCH envoy_killed_failed_after_weight_zero %d", failedAfter)
	if took > 3*time.Second {
		t.Errorf("gateway1 at weight 0 %v after its Envoy was killed, want within 3 s", took)
	}
	if !strings.Contains(line, "up healthy=1 total=2") {
		t.Errorf("GTM for %s: %d %q, want up with one healthy gateway of two", gatewayVIP, code, line)
	}
}
