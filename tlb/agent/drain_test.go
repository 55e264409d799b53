package agent

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

// drainingVIP: 203.0.113.10 on rs1 and rs2, rs2 draining since since
// (zero: since first seen).
func drainingVIP(since time.Time) model.Desired {
	a, b := netip.MustParseAddr(rs1), netip.MustParseAddr(rs2)
	return model.Desired{VIPRanges: []netip.Prefix{subnet}, Services: []model.Service{
		{VIP: netip.MustParseAddr("203.0.113.10"), Port: 80, Protocol: model.TCP, RealServers: []model.RealServer{
			{Addr: a, Weight: 1}, {Addr: b, Weight: 1, Draining: true, DrainSince: since}}},
	}}
}

// TestDrainedPlan: a draining real server is at weight 0 while it has
// active connections, until its timeout; it is left out once it has
// none after settling at weight 0, or at the timeout whatever it has.
func TestDrainedPlan(t *testing.T) {
	now := time.Date(2026, 12, 3, 1, 0, 0, 0, time.UTC)
	b := netip.MustParseAddr(rs2)
	kept := map[string]int{"203.0.113.10>" + rs1: 1, "203.0.113.10>" + rs2: 0}
	gone := map[string]int{"203.0.113.10>" + rs1: 1}
	tests := map[string]struct {
		since     time.Time // the annotation's time; zero: "true"
		firstSeen time.Time // zero: seen now for the first time
		active    map[netip.Addr]int
		want      map[string]int
		removed   bool
	}{
		"just seen, no connection: weight 0 first (settle)": {active: map[netip.Addr]int{}, want: kept},
		"settled, active connections: weight 0":             {firstSeen: now.Add(-10 * time.Second), active: map[netip.Addr]int{b: 3}, want: kept},
		"settled, no active connection: removed": {firstSeen: now.Add(-10 * time.Second), active: map[netip.Addr]int{b: 0},
			want: gone, removed: true},
		"settled, IPVS holds no destination for it: removed": {firstSeen: now.Add(-2 * time.Second), active: map[netip.Addr]int{},
			want: gone, removed: true},
		"counts unknown: weight 0 until the timeout": {firstSeen: now.Add(-time.Minute), want: kept},
		"timeout passed since first seen, connections left: removed": {firstSeen: now.Add(-5 * time.Minute),
			active: map[netip.Addr]int{b: 7}, want: gone, removed: true},
		"timeout from the annotation's time, not from first seen": {since: now.Add(-6 * time.Minute), firstSeen: now.Add(-time.Second / 2),
			active: map[netip.Addr]int{b: 7}, want: gone, removed: true},
		"annotation's time recent: weight 0": {since: now.Add(-time.Minute), firstSeen: now.Add(-time.Minute),
			active: map[netip.Addr]int{b: 7}, want: kept},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := drainingVIP(tc.since)
			seen := map[netip.Addr]time.Time{}
			if !tc.firstSeen.IsZero() {
				seen[b] = tc.firstSeen
			}
			out, plan := Drained(in, tc.active, seen, now, 5*time.Minute)
			if got := weightsOf(out); !mapsEqual(got, tc.want) {
				t.Errorf("weights %v, want %v", got, tc.want)
			}
			if got := slices.Contains(plan.Removed, b); got != tc.removed || slices.Contains(plan.Draining, b) == tc.removed {
				t.Errorf("plan %+v, want removed %v", plan, tc.removed)
			}
			for _, s := range out.Services {
				for _, rs := range s.RealServers {
					if rs.Draining || !rs.DrainSince.IsZero() {
						t.Errorf("output keeps a drain mark: %+v", rs)
					}
				}
			}
			if !in.Services[0].RealServers[1].Draining || len(in.Services[0].RealServers) != 2 {
				t.Error("Drained changed its input")
			}
		})
	}
}

// fakeConnections returns the counts the test sets, and records the
// services it was asked about.
type fakeConnections struct {
	mu     sync.Mutex
	active map[netip.Addr]int
	asked  [][]model.Key
}

func (f *fakeConnections) Count(_ context.Context, services []model.Key) (map[netip.Addr]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, services)
	out := map[netip.Addr]int{}
	for k, v := range f.active {
		out[k] = v
	}
	return out, nil
}

func (f *fakeConnections) set(rs string, n int) {
	f.mu.Lock()
	f.active[netip.MustParseAddr(rs)] = n
	f.mu.Unlock()
}

// TestDrainKeepsFlowsThenRemoves runs the agent: a draining gateway
// gets weight 0 and is no healthy gateway for GTM; the agent counts its
// connections every DrainPoll, and removes it once they end.
func TestDrainKeepsFlowsThenRemoves(t *testing.T) {
	conns := &fakeConnections{active: map[netip.Addr]int{netip.MustParseAddr(rs2): 4}}
	r := start(t, health.AnnounceSubnets, drainingVIP(time.Time{}), map[string]health.State{rs1: health.Up, rs2: health.Up},
		func(o *Options) { o.Connections, o.DrainPoll = conns, 250*time.Millisecond })
	r.ann.next(t)
	if got := weightsOf(r.prog.last()); !mapsEqual(got, map[string]int{"203.0.113.10>" + rs1: 1, "203.0.113.10>" + rs2: 0}) {
		t.Errorf("weights while draining %v, want the draining gateway at 0", got)
	}
	if l := r.gtm.line("203.0.113.10"); l != "203.0.113.10 up healthy=1 total=2" {
		t.Errorf("GTM while draining %q, want one healthy gateway of two", l)
	}
	waitAsked(t, r.clock, 250*time.Millisecond)
	// Connections end; past the settle time the next poll removes it.
	conns.set(rs2, 0)
	r.clock.advance(2 * time.Second)
	r.clock.fire <- time.Now()
	r.ann.next(t)
	if got := weightsOf(r.prog.last()); !mapsEqual(got, map[string]int{"203.0.113.10>" + rs1: 1}) {
		t.Errorf("weights after the connections ended %v, want the drained gateway removed", got)
	}
	if l := r.gtm.line("203.0.113.10"); l != "203.0.113.10 up healthy=1 total=1" {
		t.Errorf("GTM after the drain %q", l)
	}
	conns.mu.Lock()
	defer conns.mu.Unlock()
	want := []model.Key{{VIP: netip.MustParseAddr("203.0.113.10"), Protocol: model.TCP, Port: 80}}
	for _, asked := range conns.asked {
		if !slices.Equal(asked, want) {
			t.Errorf("connections counted over %v, want the draining real server's service only %v", asked, want)
		}
	}
}

// TestDrainingServices: only the services holding a draining real server
// are named, each once, in the model's order.
func TestDrainingServices(t *testing.T) {
	vip := netip.MustParseAddr("203.0.113.10")
	a, b := netip.MustParseAddr(rs1), netip.MustParseAddr(rs2)
	d := model.Desired{Services: []model.Service{
		{VIP: vip, Port: 443, Protocol: model.TCP, RealServers: []model.RealServer{{Addr: a, Weight: 1}, {Addr: b, Draining: true}}},
		{VIP: vip, Port: 80, Protocol: model.TCP, RealServers: []model.RealServer{{Addr: a, Weight: 1}, {Addr: b, Weight: 1}}},
		{VIP: vip, Port: 53, Protocol: model.UDP, RealServers: []model.RealServer{{Addr: a, Draining: true}, {Addr: b, Draining: true}}},
	}}
	want := []model.Key{{VIP: vip, Protocol: model.TCP, Port: 443}, {VIP: vip, Protocol: model.UDP, Port: 53}}
	if got := DrainingServices(d); !slices.Equal(got, want) {
		t.Errorf("DrainingServices = %v, want %v", got, want)
	}
}

// waitAsked waits until the agent asks the clock for a timer of d.
func waitAsked(t *testing.T, c *fakeClock, d time.Duration) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case got := <-c.asked:
			if got == d {
				return
			}
		case <-deadline:
			t.Fatalf("the agent asked for no %v timer within 5s", d)
		}
	}
}

// TestReadyWithNoService: a director whose L4 cluster has no Service yet
// is ready (its rollout completes) and announces nothing.
func TestReadyWithNoService(t *testing.T) {
	r := start(t, health.AnnounceSubnets, model.Desired{VIPRanges: []netip.Prefix{subnet}}, nil)
	if c := r.ann.next(t); len(c.prefixes) != 0 || c.withdrawAll {
		t.Fatalf("announced %+v with no Service, want nothing", c)
	}
	if ready, reason := r.ready.get(); !ready {
		t.Errorf("not ready with no Service: %q", reason)
	}
	// The first Service with no healthy gateway yet: not ready.
	d := twoVIPs()
	r.updates <- d
	r.ann.next(t)
	if ready, _ := r.ready.get(); ready {
		t.Error("ready with VIPs and no healthy gateway")
	}
}
