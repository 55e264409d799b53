package agent

import (
	"net/netip"
	"slices"

	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

// Effective returns desired with every real server that health reports
// Down at weight 0, so IPVS (mh-fallback) sends its new flows elsewhere
// while its existing flows keep their entries. Unknown (not yet probed)
// and Up real servers keep their configured weight. desired is not
// modified.
func Effective(desired model.Desired, state func(netip.Addr) health.State) model.Desired {
	out := model.Desired{VIPRanges: slices.Clone(desired.VIPRanges)}
	for _, s := range desired.Services {
		s.Flags = slices.Clone(s.Flags)
		rss := make([]model.RealServer, len(s.RealServers))
		for i, rs := range s.RealServers {
			if state(rs.Addr) == health.Down {
				rs.Weight = 0
			}
			rss[i] = rs
		}
		s.RealServers = rss
		out.Services = append(out.Services, s)
	}
	return out
}

// VIPs maps each VIP of desired to its real servers over all its ports.
func VIPs(desired model.Desired) health.VIPTable {
	t := health.VIPTable{}
	for _, s := range desired.Services {
		if _, ok := t[s.VIP]; !ok {
			t[s.VIP] = nil
		}
		for _, rs := range s.RealServers {
			if !slices.Contains(t[s.VIP], rs.Addr) {
				t[s.VIP] = append(t[s.VIP], rs.Addr)
			}
		}
	}
	return t
}

// RealServers returns every distinct real server of desired, sorted.
func RealServers(desired model.Desired) []netip.Addr {
	var out []netip.Addr
	for _, s := range desired.Services {
		for _, rs := range s.RealServers {
			out = append(out, rs.Addr)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}

// Serving returns the real servers of desired that take new flows: a
// weight above 0 in at least one service.
func Serving(desired model.Desired) map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	for _, s := range desired.Services {
		for _, rs := range s.RealServers {
			if rs.Weight > 0 {
				out[rs.Addr] = true
			}
		}
	}
	return out
}
