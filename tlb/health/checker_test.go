package health

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// fakeProber answers from a map the test changes; missing means failure.
type fakeProber struct {
	mu    sync.Mutex
	ok    map[netip.Addr]bool
	calls int
}

func (f *fakeProber) set(rs netip.Addr, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ok[rs] = ok
}

func (f *fakeProber) Probe(_ context.Context, rs netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.ok[rs] {
		return nil
	}
	return errors.New("refused")
}

// fakeClock fires After only when the test ticks it.
type fakeClock struct {
	now   time.Time
	waits chan chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_800_000_000, 0), waits: make(chan chan time.Time, 1)}
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.waits <- ch
	return ch
}

// tick waits until Run waits on the clock, then releases it.
func (c *fakeClock) tick(t *testing.T) {
	t.Helper()
	select {
	case ch := <-c.waits:
		ch <- c.now
	case <-time.After(5 * time.Second):
		t.Fatal("checker never waited on the clock")
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

var (
	rsA = netip.MustParseAddr("198.18.1.1")
	rsB = netip.MustParseAddr("198.18.1.2")
)

func TestCheckerRiseFallAndChanges(t *testing.T) {
	p := &fakeProber{ok: map[netip.Addr]bool{rsA: true, rsB: true}}
	var changes []Change
	c, err := NewChecker(Config{Port: 8080, Rise: 2, Fall: 3}, p, newFakeClock(), quiet(), nil, func(ch Change) { changes = append(changes, ch) })
	if err != nil {
		t.Fatal(err)
	}
	c.SetRealServers([]netip.Addr{rsB, rsA})
	ctx := context.Background()

	c.CheckOnce(ctx)
	if len(changes) != 2 || changes[0].RealServer != rsA || changes[0].State != Up || changes[1].RealServer != rsB {
		t.Fatalf("first round changes = %+v, want A up then B up", changes)
	}
	changes = nil
	p.set(rsB, false)
	for round := 1; round <= 2; round++ {
		c.CheckOnce(ctx)
		if len(changes) != 0 || !c.Up(rsB) {
			t.Fatalf("after %d failures: changes %+v, B up=%v; want no change before fall=3", round, changes, c.Up(rsB))
		}
	}
	c.CheckOnce(ctx)
	if len(changes) != 1 || changes[0].RealServer != rsB || changes[0].State != Down || changes[0].Err == nil {
		t.Fatalf("third failure: changes = %+v, want B down with its error", changes)
	}
	if !c.Up(rsA) {
		t.Error("A went down with B")
	}
	changes = nil
	p.set(rsB, true)
	c.CheckOnce(ctx)
	if len(changes) != 0 {
		t.Fatalf("one success brought B up: %+v (rise=2)", changes)
	}
	c.CheckOnce(ctx)
	if len(changes) != 1 || changes[0].State != Up {
		t.Fatalf("second success: changes = %+v, want B up", changes)
	}

	c.SetRealServers([]netip.Addr{rsA})
	if c.State(rsB) != Unknown {
		t.Errorf("removed real server state = %v, want unknown", c.State(rsB))
	}
}

func TestCheckerRunWaitsForTheClock(t *testing.T) {
	p := &fakeProber{ok: map[netip.Addr]bool{rsA: true}}
	clk := newFakeClock()
	rounds := make(chan Change, 10)
	c, err := NewChecker(Config{Port: 8080, Rise: 1, Fall: 1}, p, clk, quiet(), nil, func(ch Change) { rounds <- ch })
	if err != nil {
		t.Fatal(err)
	}
	c.SetRealServers([]netip.Addr{rsA})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()

	if ch := <-rounds; ch.State != Up {
		t.Fatalf("first round: %+v", ch)
	}
	p.set(rsA, false)
	// No tick yet: Run must be waiting, not probing.
	select {
	case ch := <-rounds:
		t.Fatalf("change %+v before the clock ticked", ch)
	case <-time.After(50 * time.Millisecond):
	}
	clk.tick(t)
	if ch := <-rounds; ch.State != Down {
		t.Fatalf("after tick: %+v, want down (fall=1)", ch)
	}
	cancel()
	clk.tick(t) // release the wait, if Run got there first
	<-done
}
