package agent

import (
	"context"
	"net/netip"
	"slices"
	"time"

	"github.com/tlbproject/tlb/tlb/model"
)

// Defaults of a gateway drain (model.RealServer.Draining).
const (
	// DefaultDrainTimeout is how long a draining real server keeps its
	// established flows at most before it is removed anyway.
	DefaultDrainTimeout = 5 * time.Minute
	// DefaultDrainPoll is how often the agent counts the connections of
	// draining real servers.
	DefaultDrainPoll = time.Second
	// drainSettle is how long a draining real server stays at weight 0
	// before it may be removed for having no connection: a count read
	// while the weight is being written must not decide alone.
	drainSettle = time.Second
)

// Connections counts, per real server, the connections IPVS holds to it
// (active and inactive: its ActiveConn and InActConn) over the given
// services of the director. It reads only those services' real servers,
// never the whole IPVS table: the director plans from memory, and a drain
// costs one read per service that holds a draining real server.
type Connections interface {
	Count(ctx context.Context, services []model.Key) (map[netip.Addr]int, error)
}

// DrainPlan says what becomes of each draining real server in one pass.
type DrainPlan struct {
	// Draining are the real servers kept at weight 0: IPVS still holds
	// connections to them (or the count is unknown) and their timeout
	// has not passed.
	Draining []netip.Addr
	// Removed are the real servers left out of the model: no connection
	// after settling at weight 0, or their timeout passed.
	Removed []netip.Addr
}

// Drained returns desired with every Draining real server either at
// weight 0 or left out, and the plan. A draining real server is left
// out once it has been draining (firstSeen: when this director first saw
// it) for at least the settle time and conns counts no connection to
// it, or once its timeout (from its DrainSince, else firstSeen) has
// passed; until then it is kept at weight 0 so its established flows
// keep their real server. conns nil means the counts are unknown:
// only the timeout removes. The output carries no drain marks (the
// director programs weights), and keeps the real servers' order.
// desired is not modified.
func Drained(desired model.Desired, conns map[netip.Addr]int, firstSeen map[netip.Addr]time.Time, now time.Time,
	timeout time.Duration) (model.Desired, DrainPlan) {
	out := desired
	out.Services = make([]model.Service, 0, len(desired.Services))
	var plan DrainPlan
	for _, s := range desired.Services {
		rss := make([]model.RealServer, 0, len(s.RealServers))
		for _, rs := range s.RealServers {
			if rs.Draining {
				seen := firstSeen[rs.Addr]
				if seen.IsZero() {
					seen = now
				}
				since := rs.DrainSince
				if since.IsZero() {
					since = seen
				}
				n, known := conns[rs.Addr]
				if conns != nil && !known {
					n, known = 0, true // IPVS holds no connection to it
				}
				if !now.Before(since.Add(timeout)) || (known && n == 0 && now.Sub(seen) >= drainSettle) {
					plan.Removed = append(plan.Removed, rs.Addr)
					continue
				}
				plan.Draining = append(plan.Draining, rs.Addr)
				rs.Weight = 0
			}
			rs.Draining, rs.DrainSince = false, time.Time{}
			rss = append(rss, rs)
		}
		s.RealServers = rss
		out.Services = append(out.Services, s)
	}
	plan.Draining = sortedSet(plan.Draining)
	plan.Removed = sortedSet(plan.Removed)
	return out, plan
}

// DrainingServices returns the keys of the services of desired that hold
// a Draining real server, in the model's order: the only services whose
// connections a drain needs to count.
func DrainingServices(desired model.Desired) []model.Key {
	var out []model.Key
	for _, s := range desired.Services {
		if slices.ContainsFunc(s.RealServers, func(rs model.RealServer) bool { return rs.Draining }) {
			out = append(out, s.Key())
		}
	}
	return out
}

// DrainingRealServers returns the real servers desired marks Draining,
// sorted, each once.
func DrainingRealServers(desired model.Desired) []netip.Addr {
	var out []netip.Addr
	for _, s := range desired.Services {
		for _, rs := range s.RealServers {
			if rs.Draining {
				out = append(out, rs.Addr)
			}
		}
	}
	return sortedSet(out)
}

func sortedSet(addrs []netip.Addr) []netip.Addr {
	slices.SortFunc(addrs, netip.Addr.Compare)
	return slices.Compact(addrs)
}
