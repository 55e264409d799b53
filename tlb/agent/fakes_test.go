package agent

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

// fakeProgrammer records every model it is asked to program.
type fakeProgrammer struct {
	mu   sync.Mutex
	got  []model.Desired
	fail error
}

func (f *fakeProgrammer) Program(_ context.Context, d model.Desired) (director.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, d)
	return director.Result{}, f.fail
}

func (f *fakeProgrammer) setFail(err error) { f.mu.Lock(); f.fail = err; f.mu.Unlock() }

func (f *fakeProgrammer) calls() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.got) }

func (f *fakeProgrammer) last() model.Desired {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[len(f.got)-1]
}

// announceCall is one call on fakeAnnouncer: a set, or withdrawAll.
type announceCall struct {
	prefixes    []netip.Prefix
	withdrawAll bool
}

// fakeAnnouncer sends every call to a channel the test reads in order.
type fakeAnnouncer struct{ calls chan announceCall }

func (f *fakeAnnouncer) Announce(_ context.Context, p []netip.Prefix) error {
	f.calls <- announceCall{prefixes: p}
	return nil
}

func (f *fakeAnnouncer) WithdrawAll(context.Context) error {
	f.calls <- announceCall{withdrawAll: true}
	return nil
}

// next returns the next call, failing after a few seconds.
func (f *fakeAnnouncer) next(t *testing.T) announceCall {
	t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no call on the announcer within 5s")
		return announceCall{}
	}
}

// fakeHealth holds states the test sets.
type fakeHealth struct {
	mu     sync.Mutex
	states map[netip.Addr]health.State
	probed []netip.Addr
}

func (f *fakeHealth) SetRealServers(rss []netip.Addr) { f.mu.Lock(); f.probed = rss; f.mu.Unlock() }

func (f *fakeHealth) getProbed() []netip.Addr { f.mu.Lock(); defer f.mu.Unlock(); return f.probed }

func (f *fakeHealth) State(rs netip.Addr) health.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.states[rs]
}

func (f *fakeHealth) set(rs string, s health.State) {
	f.mu.Lock()
	f.states[netip.MustParseAddr(rs)] = s
	f.mu.Unlock()
}

// fakeBackends holds L7 backend states the test sets.
type fakeBackends struct {
	mu      sync.Mutex
	states  map[health.Target]health.State
	targets []health.Target
}

func (f *fakeBackends) SetTargets(ts []health.Target) { f.mu.Lock(); f.targets = ts; f.mu.Unlock() }

func (f *fakeBackends) probed() []health.Target { f.mu.Lock(); defer f.mu.Unlock(); return f.targets }

func (f *fakeBackends) State(t health.Target) health.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.states[t]
}

func (f *fakeBackends) set(t health.Target, s health.State) {
	f.mu.Lock()
	f.states[t] = s
	f.mu.Unlock()
}

// fakeGTM keeps the last health handed to it.
type fakeGTM struct {
	mu sync.Mutex
	hs []health.VIPHealth
}

func (f *fakeGTM) SetHealth(hs []health.VIPHealth) { f.mu.Lock(); f.hs = hs; f.mu.Unlock() }

// line is GTM's answer for vip ("" when unknown).
func (f *fakeGTM) line(vip string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.hs {
		if h.VIP.String() == vip {
			return health.Line(h)
		}
	}
	return ""
}

type fakeReady struct {
	mu     sync.Mutex
	ready  bool
	reason string
}

func (f *fakeReady) SetReady(r bool, reason string) {
	f.mu.Lock()
	f.ready, f.reason = r, reason
	f.mu.Unlock()
}

func (f *fakeReady) get() (bool, string) { f.mu.Lock(); defer f.mu.Unlock(); return f.ready, f.reason }

// fakeClock hands out timers the test fires; asked reports each request.
type fakeClock struct {
	asked chan time.Duration
	fire  chan time.Time

	mu     sync.Mutex
	offset time.Duration // Now is the real time plus offset
}

func newFakeClock() *fakeClock {
	return &fakeClock{asked: make(chan time.Duration, 100), fire: make(chan time.Time)}
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time { c.asked <- d; return c.fire }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// advance moves Now forward by d.
func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.offset += d; c.mu.Unlock() }

var errKernel = errors.New("netlink: operation not permitted")
