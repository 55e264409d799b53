package console

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tlbproject/tlb/api"
)

// Defaults of a Collector's durations.
const (
	DefaultTimeout   = 5 * time.Second
	DefaultSlowAfter = time.Second
	// giveUpFactor times Timeout is GiveUp's default.
	giveUpFactor = 6
)

// Collector reads every source at once, each with a budget of its own:
// the API server, the list of components, each component, the local
// IPVS. A page waits for any one source at most Timeout; a read that
// takes longer is not abandoned but goes on in the background up to
// GiveUp, and the page shows that source slow, with its last good data
// and its age. So one slow source never starves the others, and a slow
// one is shown slow rather than unreachable. A source is unreachable when
// its read fails, or runs out of GiveUp. Use a *Collector: it keeps each
// source's last answers between pages (for late answers and for rates
// over two samples).
type Collector struct {
	// API is nil in file mode (no Kubernetes).
	API        APISource
	Components ComponentSource
	// IPVS is nil unless the console runs on a director and may read its
	// kernel.
	IPVS IPVSReader
	// Timeout is how long a page waits for any one source (default
	// DefaultTimeout); every source has it, at the same time.
	Timeout time.Duration
	// GiveUp is how long one read may run before its source is shown
	// unreachable (default 6 x Timeout).
	GiveUp time.Duration
	// SlowAfter is the answer time above which a source is shown slow
	// (default DefaultSlowAfter).
	SlowAfter time.Duration
	Now       func() time.Time

	mu        sync.Mutex
	api       tracked[APIState]
	endpoints tracked[[]Endpoint]
	reads     map[Endpoint]*tracked[Component]
}

// Snapshot is what the sources said at one moment.
type Snapshot struct {
	Taken    time.Time
	FileMode bool
	API      APIState
	// APIErr says why the API server could not be read ("" when it was).
	APIErr string
	// APILate is set when the API server has not answered within the
	// page's budget: API is then its last good answer (APIAge old, none
	// when APIAge is 0).
	APILate    time.Duration
	APIAge     time.Duration
	Components []Component
	// HasIPVS is set when the local kernel's IPVS was a source; IPVSErr
	// says why it could not be read.
	HasIPVS bool
	IPVS    []api.IPVSService
	IPVSErr string
	// SlowAfter is the answer time above which a source was shown slow.
	SlowAfter time.Duration
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Collector) budgets() (timeout, giveUp, slow time.Duration) {
	timeout, giveUp, slow = c.Timeout, c.GiveUp, c.SlowAfter
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if giveUp < timeout {
		giveUp = giveUpFactor * timeout
	}
	if slow <= 0 {
		slow = DefaultSlowAfter
	}
	return timeout, giveUp, slow
}

// Collect reads every source. A source that fails, runs late or runs out
// of time is recorded in the snapshot; Collect itself does not fail, and
// returns within about Timeout (twice, when the list of components is
// itself late: it is read first).
func (c *Collector) Collect(ctx context.Context) Snapshot {
	timeout, giveUp, slow := c.budgets()
	s := Snapshot{FileMode: c.API == nil, Taken: c.now(), SlowAfter: slow}
	var wg sync.WaitGroup
	if c.API != nil {
		wg.Go(func() {
			seen := c.api.read(ctx, timeout, giveUp, c.API.ReadAPI)
			s.API, s.APIErr, s.APILate, s.APIAge = apiShown(seen, time.Now())
		})
	}
	if c.IPVS != nil {
		s.HasIPVS = true
		wg.Go(func() {
			ictx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			svcs, err := c.IPVS.ReadIPVS(ictx)
			if err != nil {
				s.IPVSErr = err.Error()
				return
			}
			s.IPVS = svcs
		})
	}
	if c.Components != nil {
		wg.Go(func() { s.Components = c.readComponents(ctx, timeout, giveUp, slow) })
	}
	wg.Wait()
	return s
}

// apiShown is what a page shows of the API server.
func apiShown(s seen[APIState], now time.Time) (st APIState, errText string, late, age time.Duration) {
	switch {
	case s.Pending == 0 && s.Last.err != nil, s.Pending > 0 && s.Last.done && s.Last.err != nil:
		return APIState{}, s.Last.err.Error(), 0, 0
	case s.Pending == 0:
		return s.Last.val, "", 0, 0
	case s.Good.done:
		return s.Good.val, "", s.Pending, now.Sub(s.Good.at)
	default:
		return APIState{}, "", s.Pending, 0
	}
}

// readComponents lists the components, then reads each one on its own.
func (c *Collector) readComponents(ctx context.Context, timeout, giveUp, slow time.Duration) []Component {
	seenEps := c.endpoints.read(ctx, timeout, giveUp, c.Components.ListEndpoints)
	eps, listErr := seenEps.Good.val, error(nil)
	if seenEps.Last.done && seenEps.Last.err != nil {
		// The list's error names what is missing; what it did find
		// (the static endpoints, say) is still read.
		eps, listErr = seenEps.Last.val, seenEps.Last.err
	}
	c.mu.Lock()
	if c.reads == nil {
		c.reads = map[Endpoint]*tracked[Component]{}
	}
	cur := make(map[Endpoint]*tracked[Component], len(eps))
	for _, ep := range eps {
		t := c.reads[ep]
		if t == nil {
			t = &tracked[Component]{}
		}
		cur[ep] = t
	}
	c.reads = cur // forget the components that are gone
	c.mu.Unlock()

	out := make([]Component, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		t := cur[ep]
		wg.Go(func() {
			seen := t.read(ctx, timeout, giveUp, func(ctx context.Context) (Component, error) {
				comp := c.Components.ReadComponent(ctx, ep)
				if comp.Err != "" {
					return comp, errors.New(comp.Err)
				}
				return comp, nil
			})
			out[i] = componentShown(ep, seen, slow, time.Now())
		})
	}
	wg.Wait()
	switch {
	case listErr != nil:
		out = append(out, Component{Role: RoleDirector, Name: "discovery", Err: listErr.Error(), VIPsBound: -1})
	case seenEps.Pending > 0 && !seenEps.Good.done:
		out = append(out, Component{Role: RoleDirector, Name: "discovery", Slow: true, Pending: seenEps.Pending, NoData: true, VIPsBound: -1})
	}
	return out
}

// componentShown is what a page shows of one component: its answer for
// this page; or, when it has not answered within the budget, its last
// good answer marked slow with its age (or no data yet); or why it could
// not be read.
func componentShown(ep Endpoint, s seen[Component], slowAfter time.Duration, now time.Time) Component {
	switch {
	case s.Last.done && s.Last.err != nil:
		c := s.Last.val
		c.Role, c.Name, c.URL, c.Took, c.Pending = ep.Role, ep.Name, ep.URL, s.Last.took, s.Pending
		if c.Err == "" {
			c.Err = s.Last.err.Error()
		}
		return c
	case s.Pending == 0 || s.Good.done:
		c := s.Good.val
		c.Took, c.Pending = s.Good.took, s.Pending
		c.Slow = s.Pending > 0 || s.Good.took > slowAfter
		if s.Pending > 0 {
			c.Age = now.Sub(s.Good.at)
		}
		if s.Prev.done {
			addRates(&c, s.Prev.val, s.Good.at.Sub(s.Prev.at))
		}
		return c
	default:
		return Component{Role: ep.Role, Name: ep.Name, URL: ep.URL, Slow: true, Pending: s.Pending, NoData: true, VIPsBound: -1}
	}
}
