package health

import (
	"context"
	"slices"
	"sync"
	"time"
)

// rounds is the probe machinery both checkers share (real servers keyed
// by address, L7 backends keyed by Target): one rise/fall tracker per
// target, and rounds that probe every target at once.
type rounds[K comparable] struct {
	compare func(a, b K) int
	probe   func(ctx context.Context, target K) error
	timeout time.Duration
	rise    int
	fall    int

	mu       sync.Mutex
	trackers map[K]*tracker
}

// outcome is one target's result in a round.
type outcome[K comparable] struct {
	target  K
	err     error
	state   State
	changed bool
}

// set replaces the targets; new ones start Unknown. It returns the
// targets that were dropped.
func (r *rounds[K]) set(targets []K) []K {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trackers == nil {
		r.trackers = map[K]*tracker{}
	}
	want := make(map[K]bool, len(targets))
	for _, t := range targets {
		want[t] = true
		if _, ok := r.trackers[t]; !ok {
			r.trackers[t] = &tracker{}
		}
	}
	var dropped []K
	for t := range r.trackers {
		if !want[t] {
			delete(r.trackers, t)
			dropped = append(dropped, t)
		}
	}
	return dropped
}

// state returns a target's state (Unknown if not tracked).
func (r *rounds[K]) state(target K) State {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.trackers[target]; ok {
		return t.state
	}
	return Unknown
}

// round probes every target once, concurrently, each within the timeout,
// and applies the results. Outcomes come in target order; none when ctx
// ended (a cancelled round says nothing about the targets).
func (r *rounds[K]) round(ctx context.Context) []outcome[K] {
	r.mu.Lock()
	targets := make([]K, 0, len(r.trackers))
	for t := range r.trackers {
		targets = append(targets, t)
	}
	r.mu.Unlock()
	slices.SortFunc(targets, r.compare)

	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, r.timeout)
			defer cancel()
			errs[i] = r.probe(pctx, t)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	out := make([]outcome[K], 0, len(targets))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, t := range targets {
		tr, ok := r.trackers[t]
		if !ok {
			continue // removed while probing
		}
		st, changed := tr.observe(errs[i] == nil, r.rise, r.fall)
		out = append(out, outcome[K]{target: t, err: errs[i], state: st, changed: changed})
	}
	return out
}

// every runs once each interval until ctx ends.
func every(ctx context.Context, clock Clock, interval time.Duration, once func(context.Context)) {
	for {
		once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-clock.After(interval):
		}
	}
}
