package console

import (
	"context"
	"sync"
	"time"
)

// tracked is one source (the API server, one component, the list of
// components) read in the background, so that a slow answer is not
// thrown away when a page stops waiting: the read goes on up to its own
// limit (giveUp), the page waits for it only up to its budget, and a read
// that finishes late serves the next page. One read at a time per source.
type tracked[T any] struct {
	mu sync.Mutex
	// inFlight is closed when the read in flight ends; nil when none is.
	inFlight chan struct{}
	started  time.Time
	// last is the last read that ended; good the last that succeeded.
	last, good outcome[T]
	// prev is the good read before good (for rates over two samples).
	prev outcome[T]
}

// minRateWindow is the shortest time between the two samples a rate is
// computed from.
const minRateWindow = time.Second

// outcome is one read that ended.
type outcome[T any] struct {
	val  T
	err  error
	at   time.Time // when it ended
	took time.Duration
	done bool // false: no read ended yet
}

// seen is what a page gets of a tracked source.
type seen[T any] struct {
	// Last is the last read that ended, Good the last that succeeded and
	// Prev the good one before it.
	Last, Good, Prev outcome[T]
	// Pending is how long the read in flight has run when the page
	// stopped waiting (0 when the page saw it end).
	Pending time.Duration
}

// read starts a read with fn unless one is in flight, and waits for it up
// to budget (or the end of ctx). fn gets a context of its own that ends
// after giveUp, not with the page. Durations are measured on the
// machine's clock, whatever the page's clock says.
func (t *tracked[T]) read(ctx context.Context, budget, giveUp time.Duration, fn func(context.Context) (T, error)) seen[T] {
	t.mu.Lock()
	if t.inFlight == nil {
		done := make(chan struct{})
		t.inFlight, t.started = done, time.Now()
		go t.run(done, giveUp, fn)
	}
	done := t.inFlight
	t.mu.Unlock()

	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-ctx.Done():
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := seen[T]{Last: t.last, Good: t.good, Prev: t.prev}
	if t.inFlight != nil {
		// At least a nanosecond: Pending > 0 means in flight.
		s.Pending = max(time.Since(t.started), 1)
	}
	return s
}

func (t *tracked[T]) run(done chan struct{}, giveUp time.Duration, fn func(context.Context) (T, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), giveUp)
	defer cancel()
	start := time.Now()
	v, err := fn(ctx)
	end := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = outcome[T]{val: v, err: err, at: end, took: end.Sub(start), done: true}
	if err == nil {
		// A rate needs two samples some time apart: a page reloaded at
		// once keeps the older base.
		if !t.prev.done || end.Sub(t.good.at) >= minRateWindow {
			t.prev = t.good
		}
		t.good = t.last
	}
	t.inFlight = nil
	close(done)
}
