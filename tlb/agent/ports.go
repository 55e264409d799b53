package agent

import (
	"context"
	"net/netip"
	"time"

	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

// Programmer makes the node's data path (local VIP routes and IPVS) equal
// to a desired model. A failed call must leave the last good state.
type Programmer interface {
	Program(ctx context.Context, desired model.Desired) (director.Result, error)
}

// Announcer announces exactly a set of prefixes. *bgp.Speaker implements it.
type Announcer interface {
	// Announce makes the announced set equal to prefixes.
	Announce(ctx context.Context, prefixes []netip.Prefix) error
	// WithdrawAll withdraws every announced prefix.
	WithdrawAll(ctx context.Context) error
}

// RealServerHealth is the health checker as the agent sees it.
// *health.Checker implements it.
type RealServerHealth interface {
	// SetRealServers replaces the set of real servers probed.
	SetRealServers(rss []netip.Addr)
	// State is one real server's state after rise/fall.
	State(rs netip.Addr) health.State
}

// Readiness receives the director's readiness. *obs.Server implements it.
type Readiness interface {
	SetReady(ready bool, reason string)
}

// L7BackendHealth is the L7 backend checker as the agent sees it.
// *health.BackendChecker implements it.
type L7BackendHealth interface {
	// SetTargets replaces the set of backends probed.
	SetTargets(ts []health.Target)
	// State is one backend's state after rise/fall.
	State(t health.Target) health.State
}

// VIPBoard learns the health the agent decided for every VIP, for per-VIP
// health answers (GTM). *health.GTM implements it.
type VIPBoard interface {
	SetHealth(hs []health.VIPHealth)
}

// Clock gives the agent its timers (retry after a failure, drain) and
// the time (gateway drains). health.SystemClock implements it.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}
