//go:build lab

package director_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMWithdrawsFirstAndFailsNoRequest (issue 3, item 3): a rolling
// restart of director1's tlb while short requests flow. On SIGTERM tlb
// withdraws first (BIRD holds no route from it while the session is still
// Established), keeps IPVS in place for the drain period, exits 0; not
// one request fails; restarted, it rejoins BIRD's ECMP route.
func TestSIGTERMWithdrawsFirstAndFailsNoRequest(t *testing.T) {
	d := buildDC(t)
	d.startBoth(t)
	ctx := context.Background()

	lctx, stop := context.WithCancel(ctx)
	var l load
	wg := l.run(lctx, 4, d.request)
	defer func() { stop(); wg.Wait() }()
	time.Sleep(2 * time.Second)

	termAt := time.Now()
	if err := d.tlb[0].Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.tlb[0].Wait() }()

	// Withdraw first: BIRD loses the route while the session stays up.
	var withdrawn time.Duration
	waitUntil(t, 10*time.Second, "BIRD holds no route from director1", func() bool {
		s, err := d.bird.Session(ctx, "director1")
		if err != nil || s.Imported != 0 {
			return false
		}
		withdrawn = time.Since(termAt)
		if s.State != "Established" {
			t.Errorf("director1's session is %q when its route left BIRD: it closed instead of withdrawing first", s.State)
		}
		return true
	})
	t.Logf("director1 withdrew %v after SIGTERM, session still Established", withdrawn.Round(time.Millisecond))
	if code, body, err := d.get(0, "/readyz"); err == nil && code == 200 {
		t.Errorf("director1 /readyz = %d %q while draining, want 503", code, body)
	}

	select {
	case err := <-exited:
		t.Fatalf("tlb exited %v after SIGTERM (%v), before the %v drain period", time.Since(termAt), err, drain)
	case <-time.After(drain - time.Since(termAt) - 200*time.Millisecond):
	}
	out, _ := d.directors[0].Cmd("ipvsadm", "-Ln").CombinedOutput()
	if strings.Count(string(out), "Tunnel") != 2 {
		t.Errorf("IPVS not in place during the drain:\n%s", out)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("tlb exit after SIGTERM: %v, want status 0", err)
		}
		t.Logf("tlb exited %v after SIGTERM (drain %v)", time.Since(termAt).Round(time.Millisecond), drain)
	case <-time.After(30 * time.Second):
		t.Fatal("tlb did not exit within 30s of SIGTERM")
	}
	out, _ = d.directors[0].Cmd("ipvsadm", "-Ln").CombinedOutput()
	if strings.Count(string(out), "Tunnel") != 2 {
		t.Errorf("IPVS removed on exit; it must stay:\n%s", out)
	}
	time.Sleep(time.Second)

	// Restart: it rejoins.
	restartAt := time.Now()
	d.startDirector(t, 0)
	if _, took, err := d.bird.WaitRoutes(ctx, vipSubnet, 60*time.Second, hasNextHops(d.directorAddr...)); err != nil {
		t.Fatalf("director1 did not rejoin: %v", err)
	} else {
		t.Logf("director1 rejoined BIRD's route %v after restart (%v after the start)", took.Round(time.Millisecond), time.Since(restartAt).Round(time.Millisecond))
	}
	time.Sleep(2 * time.Second)
	stop()
	wg.Wait()
	t.Logf("requests during the rolling restart: %d ok, %d failed (first error: %v)", l.ok.Load(), l.failed.Load(), l.firstErr)
	t.Logf("BENCH director_rolling_restart_failed_requests %d count", l.failed.Load())
	t.Logf("BENCH director_rolling_restart_ok_requests %d count", l.ok.Load())
	if l.failed.Load() != 0 {
		t.Errorf("%d requests failed during the rolling restart; first: %v", l.failed.Load(), l.firstErr)
	}
	if l.ok.Load() < 50 {
		t.Errorf("only %d requests succeeded: the load did not run", l.ok.Load())
	}
}
