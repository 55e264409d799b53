package agent

import (
	"net/netip"
	"slices"

	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

// L7Targets returns every L7 backend of desired the director probes
// itself (L7 services with a probe), sorted, each once.
func L7Targets(desired model.Desired) []health.Target {
	var out []health.Target
	for _, l := range desired.L7 {
		if l.Probe == nil {
			continue
		}
		for _, b := range l.Probe.Backends {
			out = append(out, target(*l.Probe, b))
		}
	}
	slices.SortFunc(out, health.CompareTarget)
	return slices.Compact(out)
}

func target(p model.L7Probe, b netip.AddrPort) health.Target {
	return health.Target{Addr: b, Path: p.Path, Status: p.Status}
}

// L7Table returns, per VIP of desired, the state of its L7 services: the
// ready backends the source reported, or for a probed service the
// backends whose probe state is Up (Unknown, not yet probed, is not
// ready: a VIP starts down until its backends answer, as it does until
// its gateways do).
func L7Table(desired model.Desired, state func(health.Target) health.State) health.L7Table {
	if len(desired.L7) == 0 {
		return nil
	}
	t := health.L7Table{}
	for _, l := range desired.L7 {
		h := health.L7Health{Name: l.Name, Ready: l.ReadyBackends}
		if l.Probe != nil {
			h.Ready = 0
			for _, b := range l.Probe.Backends {
				if state(target(*l.Probe, b)) == health.Up {
					h.Ready++
				}
			}
		}
		t[l.VIP] = append(t[l.VIP], h)
	}
	return t
}
