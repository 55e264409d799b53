package agent

import (
	"time"

	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

// DefaultFirstAnnounceWait bounds how long, with graceful restart, the
// first announcement waits for the first probes (Options.FirstAnnounceWait).
const DefaultFirstAnnounceWait = 30 * time.Second

// FirstAnnounceWait is how long the first announcement of a director with
// BGP graceful restart may wait for the first probes: DefaultFirstAnnounceWait,
// or half the restart time the routers keep the routes if that is shorter.
func FirstAnnounceWait(restart time.Duration) time.Duration {
	return min(DefaultFirstAnnounceWait, restart/2)
}

// firstAnnounceHold is how much longer the first announcement waits: with
// Options.FirstAnnounceWait set (graceful restart), until every real server
// and L7 backend of the model has had its first probe, and at most
// FirstAnnounceWait after Run began. A restarted director's first
// announcement is followed by its End-of-RIB, on which the routers drop
// every stale route not announced again: announced before the probes, the
// empty set would withdraw the routes graceful restart kept. Zero once
// something was announced, without an announcer, or with nothing unprobed.
func (a *Agent) firstAnnounceHold(effective model.Desired) time.Duration {
	if a.opts.Announcer == nil || a.opts.FirstAnnounceWait <= 0 || a.announcedOnce {
		return 0
	}
	left := a.began.Add(a.opts.FirstAnnounceWait).Sub(a.opts.Clock.Now())
	if left <= 0 || !a.unprobed(effective) {
		return 0
	}
	return left
}

// unprobed reports whether a real server or an L7 backend of the model has
// no verdict yet.
func (a *Agent) unprobed(effective model.Desired) bool {
	for _, rs := range RealServers(effective) {
		if a.state(rs) == health.Unknown {
			return true
		}
	}
	for _, t := range L7Targets(a.desired) {
		if a.backendState(t) == health.Unknown {
			return true
		}
	}
	return false
}
