//go:build lab

package bgp_test

import (
	"context"

	"github.com/tlbproject/tlb/bgp/birdlab"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// load opens short connections to the VIP (connect, echo 8 bytes, close)
// from several workers until ctx ends, counting successes and failures.
type load struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	firstErr   error
}

func (l *load) run(ctx context.Context, d *dc, workers int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := d.request(); err != nil {
					if ctx.Err() != nil {
						return
					}
					l.failed.Add(1)
					l.mu.Lock()
					if l.firstErr == nil {
						l.firstErr = err
					}
					l.mu.Unlock()
					continue
				}
				l.ok.Add(1)
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	return &wg
}

func (d *dc) request() error {
	c, err := d.client.DialContext(context.Background(), "tcp", vip+":80")
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := []byte("tlb-ping")
	if _, err := c.Write(msg); err != nil {
		return err
	}
	_, err = io.ReadFull(c, make([]byte, len(msg)))
	return err
}

// TestRollingRestartFailsNoRequest: SIGTERM director1's speaker while
// requests flow: it withdraws first (BIRD drops the route while the
// session is still up), drains, exits 0; IPVS stays; no request fails;
// restarted, it rejoins the ECMP group.
func TestRollingRestartFailsNoRequest(t *testing.T) {
	d := buildDC(t, labBin(t))
	ctx := context.Background()
	if _, _, err := d.bird.WaitRoutes(ctx, vipSubnet, 90*time.Second, hasNextHops(d.directorAddr...)); err != nil {
		t.Fatalf("both directors in bird: %v", err)
	}
	lctx, stop := context.WithCancel(ctx)
	var l load
	wg := l.run(lctx, d, 6)
	defer func() { stop(); wg.Wait() }()
	time.Sleep(3 * time.Second)

	sig := time.Now()
	if err := d.speakers[0].Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Withdraw first: BIRD must hold 0 routes from director1 while the
	// session is still Established (one birdc call reads both).
	var sess birdlab.Session
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, err := d.bird.Session(ctx, "director1")
		if err != nil {
			t.Fatal(err)
		}
		if sess = s; s.Imported == 0 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("after SIGTERM (%v): director1 session %s with %d routes", time.Since(sig).Round(time.Millisecond), sess.State, sess.Imported)
	if sess.Imported != 0 {
		t.Fatalf("route via director1 not withdrawn after SIGTERM")
	}
	if sess.State != "Established" {
		t.Errorf("session was %s when the route left: the speaker closed the session instead of withdrawing first", sess.State)
	}
	if err := d.speakers[0].Wait(); err != nil {
		t.Fatalf("speaker exit after SIGTERM: %v", err)
	}
	t.Logf("speaker exited 0 after %v (drain 5s)", time.Since(sig).Round(time.Millisecond))
	if out := d.directors[0].Run(t, "ipvsadm", "-Ln"); !containsAll(out, "203.0.113.10:80", "198.18.11.2", "198.18.12.2") {
		t.Errorf("IPVS on director1 changed during the restart:\n%s", out)
	}
	time.Sleep(2 * time.Second) // load on director2 alone

	d.speakers[0] = d.directors[0].Start(t, filepath.Join(d.bin, "bgpspeaker"), d.speakerArgs[0]...)
	if _, took, err := d.bird.WaitRoutes(ctx, vipSubnet, 60*time.Second, hasNextHops(d.directorAddr...)); err != nil {
		t.Fatalf("director1 did not rejoin: %v", err)
	} else {
		t.Logf("director1 rejoined the ECMP group %v after restart", took.Round(time.Millisecond))
	}
	time.Sleep(3 * time.Second)
	stop()
	wg.Wait()
	t.Logf("requests: %d ok, %d failed", l.ok.Load(), l.failed.Load())
	if l.failed.Load() != 0 {
		t.Errorf("%d requests failed during the rolling restart; first: %v", l.failed.Load(), l.firstErr)
	}
	if l.ok.Load() < 50 {
		t.Errorf("only %d requests succeeded: the load did not run", l.ok.Load())
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !contains(s, x) {
			return false
		}
	}
	return true
}
