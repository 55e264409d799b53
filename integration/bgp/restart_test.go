//go:build !lab

package bgp_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp/birdlab"
)

// TestGracefulRestartKeepsRoutesAtBIRD: a director with graceful restart
// that is stopped (SIGTERM, bgp.Speaker.Stop as the director does) leaves
// its routes at BIRD, held as stale, for the whole time it is away; once it
// is back its End-of-RIB refreshes the routes it still announces and
// flushes the one it no longer does. A crash (SIGKILL) and restart keep
// them too. The kept route is never missing.
func TestGracefulRestartKeepsRoutesAtBIRD(t *testing.T) {
	l := needLab(t)
	ctx := context.Background()
	const kept, dropped = "203.0.113.0/25", "203.0.113.128/25"
	r := birdlab.StartForTest(t, l.Router, birdlab.RouterConfig{RouterID: l.RouterAddr, ASN: routerASN,
		Neighbors: neighbors(l, 1), GracefulRestart: true})
	cfg := speakerConfig(l, 0)
	cfg.GracefulRestart = true
	cfg.GracefulRestartSeconds = 60
	first := startSpeakerProcess(t, cfg, kept, dropped)
	for _, p := range []string{kept, dropped} {
		if _, _, err := r.WaitRoutes(ctx, p, 15*time.Second, hasNextHops(l.DirectorAddrs[0])); err != nil {
			t.Fatal(err)
		}
	}
	watch := watchRoute(r, kept)
	defer watch.stop()

	first.terminate(t)
	s := waitSession(t, r, "director0", func(s birdlab.Session) bool { return s.State != "Established" && s.Restarting })
	if s.Imported != 2 {
		t.Errorf("BIRD holds %d routes of the stopped director, want both (stale)", s.Imported)
	}
	for _, p := range []string{kept, dropped} {
		if rs, err := r.Routes(ctx, p); err != nil || !hasNextHops(l.DirectorAddrs[0])(rs) {
			t.Errorf("%s at BIRD while the director is away = %v (%v), want kept via %s", p, rs, err, l.DirectorAddrs[0])
		}
	}

	second := startSpeakerProcess(t, cfg, kept)
	waitSession(t, r, "director0", func(s birdlab.Session) bool { return s.State == "Established" && !s.Restarting })
	if _, _, err := r.WaitRoutes(ctx, dropped, 10*time.Second, none); err != nil {
		t.Errorf("after End-of-RIB the route no longer announced stays: %v", err)
	}
	if rs, err := r.Routes(ctx, kept); err != nil || !hasNextHops(l.DirectorAddrs[0])(rs) {
		t.Errorf("%s after the restart = %v (%v), want via %s", kept, rs, err, l.DirectorAddrs[0])
	}

	// A crash (SIGKILL) keeps the routes as well: the kernel closes the
	// session without a NOTIFICATION.
	second.kill(t)
	waitSession(t, r, "director0", func(s birdlab.Session) bool { return s.State != "Established" && s.Restarting })
	startSpeakerProcess(t, cfg, kept)
	waitSession(t, r, "director0", func(s birdlab.Session) bool { return s.State == "Established" && !s.Restarting })
	polls, missing := watch.stop()
	if missing > 0 || polls < 10 {
		t.Errorf("%s missing at BIRD in %d of %d polls across the restart, want 0 (of at least 10)", kept, missing, polls)
	}
	t.Logf("%s missing at BIRD in %d of %d polls (every 20 ms) across a SIGTERM restart and a SIGKILL restart", kept, missing, polls)
}

// TestWithoutGracefulRestartStopWithdraws: the default stop withdraws, so
// BIRD drops the routes at once even with its graceful restart on.
func TestWithoutGracefulRestartStopWithdraws(t *testing.T) {
	l := needLab(t)
	ctx := context.Background()
	r := birdlab.StartForTest(t, l.Router, birdlab.RouterConfig{RouterID: l.RouterAddr, ASN: routerASN,
		Neighbors: neighbors(l, 1), GracefulRestart: true})
	p := startSpeakerProcess(t, speakerConfig(l, 0), vipSubnet)
	if _, _, err := r.WaitRoutes(ctx, vipSubnet, 15*time.Second, hasNextHops(l.DirectorAddrs[0])); err != nil {
		t.Fatal(err)
	}
	p.terminate(t)
	if _, _, err := r.WaitRoutes(ctx, vipSubnet, 5*time.Second, none); err != nil {
		t.Errorf("a director stopped without graceful restart left its route: %v", err)
	}
	if s, err := r.Session(ctx, "director0"); err != nil || s.Restarting {
		t.Errorf("session after a plain stop = %+v (%v), want no graceful restart", s, err)
	}
}

// waitSession polls BIRD's session name until ok, failing after 20s.
func waitSession(t *testing.T, r *birdlab.Router, name string, ok func(birdlab.Session) bool) birdlab.Session {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var s birdlab.Session
	for time.Now().Before(deadline) {
		var err error
		if s, err = r.Session(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		if ok(s) {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("bird session %s is %+v after 20s", name, s)
	return s
}

// routeWatch polls BIRD for one prefix until stopped, counting the polls
// that found no route.
type routeWatch struct {
	once           sync.Once
	done           chan struct{}
	finished       chan struct{}
	polls, missing int
}

func watchRoute(r *birdlab.Router, prefix string) *routeWatch {
	w := &routeWatch{done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		for {
			select {
			case <-w.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			rs, err := r.Routes(context.Background(), prefix)
			w.polls++
			if err != nil || len(rs) == 0 {
				w.missing++
			}
		}
	}()
	return w
}

// stop ends the polling and returns how many polls ran and found nothing.
func (w *routeWatch) stop() (polls, missing int) {
	w.once.Do(func() { close(w.done) })
	<-w.finished
	return w.polls, w.missing
}
