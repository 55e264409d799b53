package agent

import (
	"context"
	"net/netip"
	"slices"
	"time"

	"github.com/tlbproject/tlb/tlb/model"
)

// drains is the agent's memory of gateway drains: when it first saw each
// draining real server, and what the last pass decided. Owned by Run's
// goroutine.
type drains struct {
	firstSeen map[netip.Addr]time.Time
	last      DrainPlan
}

// pending reports whether a real server is still draining at weight 0,
// so the agent must count its connections again.
func (d *drains) pending() bool { return len(d.last.Draining) > 0 }

// apply turns the draining real servers of effective into weights and
// absences (Drained), counting connections only while some drain, and
// logs each real server that starts draining or is removed.
func (d *drains) apply(ctx context.Context, effective model.Desired, opts Options, now time.Time) model.Desired {
	marked := DrainingRealServers(effective)
	seen := make(map[netip.Addr]time.Time, len(marked))
	for _, rs := range marked {
		if t, ok := d.firstSeen[rs]; ok {
			seen[rs] = t
			continue
		}
		seen[rs] = now
		opts.Log.Info("real server draining: weight 0, removed once its connections end", "realServer", rs, "timeout", opts.DrainTimeout)
	}
	d.firstSeen = seen
	var conns map[netip.Addr]int
	if len(marked) > 0 && opts.Connections != nil {
		var err error
		if conns, err = opts.Connections.Count(ctx, DrainingServices(effective)); err != nil {
			opts.Log.Warn("counting the connections of draining real servers failed; they stay at weight 0 until their timeout", "err", err)
			conns = nil
		}
	}
	out, plan := Drained(effective, conns, seen, now, opts.DrainTimeout)
	for _, rs := range plan.Removed {
		if !slices.Contains(d.last.Removed, rs) {
			opts.Log.Info("drained real server removed", "realServer", rs, "connections", conns[rs],
				"timedOut", conns == nil || conns[rs] > 0)
		}
	}
	d.last = plan
	return out
}
