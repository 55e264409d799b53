package director

import (
	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

const tunnelFwd = ipvs.ConnFwdTunnel

// actualService is one kernel IPVS service the director cares about (in
// the model or recorded as its own), with its destinations in list order.
type actualService struct {
	Key       model.Key
	Scheduler string
	Flags     uint32 // without the kernel's HASHED bit
	Dests     []actualDest
}

// actualState is what the kernel holds, as far as the director looks.
type actualState struct {
	Services map[model.Key]actualService
	// Foreign counts IPVS services that are neither in the model nor
	// recorded as the director's.
	Foreign int
	// Listed counts the services whose real servers were listed.
	Listed int
}

// Plan is the explicit difference between the desired and the actual
// state. Applying it makes the kernel equal the desired state.
type Plan struct {
	// AddServices are created, then their real servers added in
	// canonical add order.
	AddServices []model.Service
	// UpdateServices change scheduler or flags in place.
	UpdateServices []model.Service
	// DeleteServices are the director's own services no longer wanted.
	DeleteServices []model.Key
	// Destinations are real-server changes to services that exist.
	Destinations []DestinationPlan
	// Adopt are services in the model that already exist in the kernel
	// but are not recorded as the director's; from now on they are.
	Adopt []model.Key
	// Forget are recorded services that exist neither in the kernel nor
	// in the model.
	Forget []model.Key
	// Held are services in the model that exist in the kernel, are not
	// the director's, and have a real server forwarded other than by
	// tunnel: another IPVS user's, such as kube-proxy's IPVS mode for a
	// load balancer IP with ipMode VIP (masquerading to pods). They are
	// neither adopted nor changed; the reconcile reports them as an
	// error (see heldError).
	Held []model.Key
	// KeptServices counts services left exactly as they are.
	KeptServices int
	// KeptRealServers counts real servers left as they are.
	KeptRealServers int
	// Foreign counts IPVS services not the director's; never touched.
	Foreign int
	// Listed counts the director's services whose real servers were
	// listed from the kernel for this plan; Cached those taken from what
	// the director remembers programming (see cache.go).
	Listed, Cached int
}

// Empty reports whether the plan changes nothing at all.
func (p Plan) Empty() bool {
	return len(p.AddServices) == 0 && len(p.UpdateServices) == 0 && len(p.DeleteServices) == 0 &&
		len(p.Destinations) == 0 && len(p.Adopt) == 0 && len(p.Forget) == 0
}

// Writes returns the number of kernel writes applying the plan takes.
func (p Plan) Writes() int {
	n := len(p.AddServices) + len(p.UpdateServices) + len(p.DeleteServices)
	for _, s := range p.AddServices {
		n += len(s.RealServers)
		if orderMatters(s.Scheduler) && len(s.RealServers) > 1 {
			n++ // the switch from the build scheduler
		}
	}
	for _, d := range p.Destinations {
		n += len(d.Delete) + len(d.Update) + len(d.Add)
	}
	return n
}

// buildPlan diffs desired (sorted, defaults applied, valid) against
// actual. owned reports whether the director recorded a service as its
// own; recorded lists every recorded key.
func buildPlan(desired model.Desired, actual actualState, owned func(model.Key) bool, recorded []model.Key) Plan {
	p := Plan{Foreign: actual.Foreign, Listed: actual.Listed}
	wanted := make(map[model.Key]bool, len(desired.Services))
	for _, s := range desired.Services {
		k := s.Key()
		wanted[k] = true
		a, exists := actual.Services[k]
		if !exists {
			p.AddServices = append(p.AddServices, s)
			continue
		}
		if !owned(k) {
			if heldByOther(a) {
				p.Held = append(p.Held, k)
				continue
			}
			p.Adopt = append(p.Adopt, k)
		}
		p.planExisting(s, a)
	}
	for k := range actual.Services {
		if !wanted[k] && owned(k) {
			p.DeleteServices = append(p.DeleteServices, k)
		}
	}
	for _, k := range recorded {
		if _, inKernel := actual.Services[k]; !inKernel && !wanted[k] {
			p.Forget = append(p.Forget, k)
		}
	}
	sortKeys(p.DeleteServices)
	sortKeys(p.Forget)
	return p
}

// heldByOther reports whether a service the director does not own is
// another IPVS user's: one of its real servers is forwarded other than by
// tunnel, which the director never programs. A service with no real
// server, or only tunnelled ones, is one the director may have created
// and lost the record of; it is adopted.
func heldByOther(a actualService) bool {
	for _, d := range a.Dests {
		if d.Fwd != tunnelFwd {
			return true
		}
	}
	return false
}

// planExisting plans the change of one service that exists, a as the
// kernel holds it, to s (sorted, defaults applied).
func (p *Plan) planExisting(s model.Service, a actualService) {
	svcChanged := a.Scheduler != string(s.Scheduler) || a.Flags != model.FlagBits(s.Flags)
	if svcChanged {
		p.UpdateServices = append(p.UpdateServices, s)
	}
	dp := planDestinations(s.Key(), a.Dests, s.RealServers, orderMatters(s.Scheduler), s.Encap)
	p.KeptRealServers += dp.Kept
	if !dp.Empty() {
		p.Destinations = append(p.Destinations, dp)
	} else if !svcChanged {
		p.KeptServices++
	}
}

// planFromMemory plans d against what the director programmed (see
// cache.go), listing nothing: changed services it remembers are planned
// against their remembered kernel lists, others are added; services the
// model no longer names are deleted (the director remembers only its
// own). Adopt and Forget need a listing and stay empty.
func (p *programmed) planFromMemory(d diff) Plan {
	plan := Plan{Foreign: p.foreign, KeptServices: d.kept, KeptRealServers: d.keptRealServers, Cached: d.kept,
		DeleteServices: d.gone}
	for _, c := range d.changed {
		had, ok := p.services[c.want.Key()]
		if !ok {
			plan.AddServices = append(plan.AddServices, c.want)
			continue
		}
		plan.Cached++
		plan.planExisting(c.want, had.actual())
	}
	return plan
}
