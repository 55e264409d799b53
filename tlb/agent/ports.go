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

// VIPDirectory learns which real servers serve each VIP, for per-VIP
// health answers. *health.GTM implements it.
type VIPDirectory interface {
	SetVIPs(v health.VIPTable)
}

// Clock gives the agent its timers (retry after a failure, drain).
// health.SystemClock implements it.
type Clock interface {
	After(d time.Duration) <-chan time.Time
}
