package agent

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/tlbproject/tlb/tlb/health"
)

// TestFirstAnnounceWaitsForTheFirstProbes: with graceful restart, the
// first announcement waits while a real server has no verdict (the agent
// asks for a timer and announces nothing), then announces what the probes
// say: the routers' kept routes are refreshed, not flushed by an empty set.
func TestFirstAnnounceWaitsForTheFirstProbes(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), map[string]health.State{rs1: health.Up},
		func(o *Options) { o.FirstAnnounceWait = time.Minute })
	if d := <-r.clock.asked; d <= 0 || d > time.Minute {
		t.Errorf("waits %v for rs2's first probe, want at most the minute given", d)
	}
	select {
	case c := <-r.ann.calls:
		t.Fatalf("announced %+v with rs2 not probed yet, want nothing", c)
	default:
	}
	r.health.set(rs2, health.Down)
	r.agent.HealthChanged(health.Change{RealServer: netip.MustParseAddr(rs2), State: health.Down})
	if c := r.ann.next(t); !slices.Equal(c.prefixes, []netip.Prefix{subnet}) {
		t.Errorf("first announcement after the probes = %v, want [%s]", c.prefixes, subnet)
	}
}

// TestFirstAnnounceWaitIsBounded: probes that never answer hold the first
// announcement only for FirstAnnounceWait; then the agent announces what
// it knows (nothing healthy: the empty set).
func TestFirstAnnounceWaitIsBounded(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), nil, func(o *Options) { o.FirstAnnounceWait = time.Minute })
	<-r.clock.asked
	r.clock.advance(time.Minute)
	r.clock.fire <- time.Now()
	if c := r.ann.next(t); len(c.prefixes) != 0 || c.withdrawAll {
		t.Errorf("announcement after the wait = %+v, want the empty set", c)
	}
}

// TestWithoutGracefulRestartTheFirstPassAnnounces: no wait by default.
func TestWithoutGracefulRestartTheFirstPassAnnounces(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), map[string]health.State{rs1: health.Up})
	if c := r.ann.next(t); !slices.Equal(c.prefixes, []netip.Prefix{subnet}) {
		t.Errorf("first pass announced %v, want [%s]", c.prefixes, subnet)
	}
}

func TestFirstAnnounceWaitIsHalfAShortRestartTime(t *testing.T) {
	for restart, want := range map[time.Duration]time.Duration{120 * time.Second: DefaultFirstAnnounceWait, 20 * time.Second: 10 * time.Second} {
		if got := FirstAnnounceWait(restart); got != want {
			t.Errorf("FirstAnnounceWait(%v) = %v, want %v", restart, got, want)
		}
	}
}
