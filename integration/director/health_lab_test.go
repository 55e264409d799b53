//go:build lab

package director_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestGatewayHealthMovesNewFlowsAndGTM (issue 3, item 6), with tlb's own
// health checker: gateway1's health endpoint fails; within the fall count
// both directors program it at weight 0, new flows all go to gateway2,
// streams already open keep flowing. It recovers and gets new flows again.
// When every gateway fails, /vip/<VIP> answers 503, the directors are not
// ready and withdraw the range from BIRD.
func TestGatewayHealthMovesNewFlowsAndGTM(t *testing.T) {
	d := buildDC(t)
	d.startBoth(t)
	ctx := context.Background()
	gw1, gw2 := d.gatewayAddr[0], d.gatewayAddr[1]

	for i := range d.directors {
		code, body, err := d.get(i, "/vip/"+vip)
		if err != nil || code != 200 || !strings.Contains(body, "healthy=2 total=2") {
			t.Errorf("director%d GTM before failures = %d %q %v, want 200 healthy=2", i+1, code, body, err)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ss, wg, err := d.openStreams(sctx, 10, 200*time.Millisecond)
	if err != nil {
		d.diagnose(t)
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "every stream exchanged data", func() bool { return allProgressedSince(ss, time.Time{}) })

	// gateway1 fails its health check.
	failAt := time.Now()
	d.healthy[0].Store(false)
	for i := range d.directors {
		waitUntil(t, 30*time.Second, fmt.Sprintf("director%d sets %s to weight 0", i+1, gw1), func() bool {
			w := d.weights(i)
			return w[gw1] == "0" && w[gw2] == "1"
		})
	}
	took := time.Since(failAt)
	// A round is the interval plus the probe time (at most the timeout,
	// equal to the interval here); the failure can land just after a
	// round, so fall+1 rounds, plus the reconcile and ipvsadm polling in
	// the emulated VM.
	bound := time.Duration(healthFall+1)*2*healthInterval + 2*time.Second
	t.Logf("both directors put %s at weight 0 %v after its health endpoint failed (fall %d x %v)", gw1, took.Round(time.Millisecond), healthFall, healthInterval)
	t.Logf("BENCH director_health_down_to_weight0_ms %d ms", took.Milliseconds())
	if took > bound {
		t.Errorf("weight 0 after %v, want within %v", took, bound)
	}
	got, err := d.newFlows(40)
	if err != nil {
		d.diagnose(t)
		t.Fatal(err)
	}
	t.Logf("40 new flows with %s down: per gateway %v", gw1, got)
	if got[0] != 0 || got[1] != 40 {
		t.Errorf("new flows per gateway %v, want [0 40]", got)
	}
	for i := range d.directors {
		code, body, _ := d.get(i, "/vip/"+vip)
		if code != 200 || !strings.Contains(body, "healthy=1 total=2") {
			t.Errorf("director%d GTM with one gateway down = %d %q, want 200 healthy=1", i+1, code, body)
		}
	}
	checkAt := time.Now()
	waitUntil(t, 10*time.Second, "every stream still exchanging data", func() bool { return allProgressedSince(ss, checkAt) })
	stop()
	wg.Wait()
	if n, first := broken(ss); n > 0 {
		t.Errorf("%d of 10 streams broke while gateway1 went to weight 0; first: %v", n, first)
	}

	// gateway1 recovers: weight 1 again, and it gets new flows.
	d.healthy[0].Store(true)
	for i := range d.directors {
		waitUntil(t, 30*time.Second, fmt.Sprintf("director%d restores %s", i+1, gw1), func() bool { return d.weights(i)[gw1] == "1" })
	}
	if got, err = d.newFlows(40); err != nil {
		t.Fatal(err)
	}
	t.Logf("40 new flows after %s recovered: per gateway %v", gw1, got)
	if got[0] == 0 {
		t.Errorf("recovered gateway got no new flows: %v", got)
	}

	// Every gateway fails: GTM 503, not ready, the range withdrawn.
	d.healthy[0].Store(false)
	d.healthy[1].Store(false)
	for i := range d.directors {
		waitUntil(t, 30*time.Second, fmt.Sprintf("director%d GTM reports %s down", i+1, vip), func() bool {
			code, body, _ := d.get(i, "/vip/"+vip)
			return code == 503 && strings.Contains(body, "down healthy=0 total=2")
		})
		// Readiness follows on the agent's next pass after the health change.
		var code int
		var body string
		waitUntil(t, 10*time.Second, fmt.Sprintf("director%d /readyz reports not ready", i+1), func() bool {
			code, body, _ = d.get(i, "/readyz")
			return code == 503
		})
		t.Logf("director%d with every gateway down: /readyz %d %q", i+1, code, body)
	}
	if _, _, err := d.bird.WaitRoutes(ctx, vipSubnet, 10*time.Second, hasNextHops()); err != nil {
		t.Errorf("range still in BIRD with every gateway down: %v", err)
	}
	d.healthy[0].Store(true)
	d.healthy[1].Store(true)
	if _, took, err := d.bird.WaitRoutes(ctx, vipSubnet, 30*time.Second, hasNextHops(d.directorAddr...)); err != nil {
		t.Errorf("range not announced again after the gateways recovered: %v", err)
	} else {
		t.Logf("gateways recovered: both directors announce again after %v", took.Round(time.Millisecond))
	}
}
