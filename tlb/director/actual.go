package director

import (
	"fmt"
	"net/netip"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

// listActual reads the kernel's IPVS services with one GetServices and,
// for each service the director cares about (wanted or owned), one
// list of its real servers with their tunnels. Other services are counted as foreign and their real
// servers are not listed.
func listActual(h IPVS, wanted map[model.Key]model.Service, owned func(model.Key) bool) (actualState, error) {
	svcs, err := h.GetServices()
	if err != nil {
		return actualState{}, fmt.Errorf("list IPVS services: %w", err)
	}
	st := actualState{Services: make(map[model.Key]actualService, len(wanted))}
	for _, s := range svcs {
		k, ok := serviceKey(s)
		if _, want := wanted[k]; !ok || (!want && !owned(k)) {
			st.Foreign++
			continue
		}
		a := actualService{Key: k, Scheduler: s.SchedName, Flags: s.Flags &^ svcFlagHashed}
		dests, err := listDestinations(h, s)
		if err != nil {
			return actualState{}, fmt.Errorf("list real servers of IPVS service %s: %w", k, err)
		}
		a.Dests = dests
		st.Services[k] = a
		st.Listed++
	}
	return st, nil
}

func toActualDests(dests []*ipvs.Destination) []actualDest {
	out := make([]actualDest, 0, len(dests))
	for _, d := range dests {
		addr, ok := netip.AddrFromSlice(d.Address)
		if !ok {
			continue
		}
		out = append(out, actualDest{
			Addr:   netip.AddrPortFrom(addr.Unmap(), d.Port),
			Weight: d.Weight,
			Fwd:    d.ConnectionFlags & ipvs.ConnFwdMask,
		})
	}
	return out
}
