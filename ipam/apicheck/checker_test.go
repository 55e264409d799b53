package apicheck

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/tlbproject/tlb/internal/poll"
)

// reports records what a Checker reported.
type reports struct {
	mu  sync.Mutex
	got []string
}

func (r *reports) add(ok bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ok {
		r.got = append(r.got, "ready")
	} else {
		r.got = append(r.got, reason)
	}
}

func (r *reports) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// TestCheckerBacksOffThenReports: three failed probes are logged and
// reported not ready, with the waits doubling (1s, 2s, 4s); the fourth
// answer makes it ready, and the steady interval applies again.
func TestCheckerBacksOffThenReports(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	var mu sync.Mutex
	probes := 0
	prober := ProberFunc(func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		probes++
		if probes <= 3 {
			return errors.New("connection refused")
		}
		return nil
	})
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))
	rep := &reports{}
	c := NewChecker(prober, "https://api:6443", log, clk, rep.add)
	c.Backoff = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 100, Cap: 30 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		poll.Until(t, 5*time.Second, "the checker waits for its next try", clk.HasWaiters)
		if n := len(rep.list()); n != i+1 {
			t.Fatalf("after %d failures: %d reports %v", i+1, n, rep.list())
		}
		if r := rep.list()[i]; !strings.Contains(r, "https://api:6443 unreachable") || !strings.Contains(r, "next in "+wait.String()) {
			t.Fatalf("report %d = %q, want the server, unreachable and next in %s", i, r, wait)
		}
		clk.Step(wait - time.Millisecond)
		if !clk.HasWaiters() {
			t.Fatalf("retried before %s", wait)
		}
		clk.Step(time.Millisecond)
	}
	poll.Until(t, 5*time.Second, "ready reported", func() bool {
		l := rep.list()
		return len(l) == 4 && l[3] == "ready"
	})
	poll.Until(t, 5*time.Second, "the checker waits for the next check", clk.HasWaiters)
	clk.Step(DefaultInterval)
	poll.Until(t, 5*time.Second, "the next check is done", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return probes == 5
	})
	if l := rep.list(); len(l) != 4 {
		t.Fatalf("a steady success was reported again: %v", l)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if n := strings.Count(logs.String(), "API server unreachable; retrying with backoff"); n != 3 {
		t.Fatalf("%d failure lines logged, want 3:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "API server answers again") {
		t.Fatalf("recovery not logged:\n%s", logs.String())
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
