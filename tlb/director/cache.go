package director

import (
	"net/netip"
	"slices"
	"time"

	"github.com/tlbproject/tlb/tlb/model"
)

// DefaultFullListAfter is the longest the director plans from what it
// remembers when Options.FullListAfter is 0. With the default 30 s resync,
// every second or third resync lists everything.
const DefaultFullListAfter = time.Minute

// Planning from what the director programmed, without listing.
//
// The director knows what it programmed: after a reconcile that succeeded,
// the kernel holds exactly the desired services it applied, each real
// server where the director's own writes left it (the kernel puts an added
// real server at the head of the list; updates keep the position; see
// order.go). The director keeps that knowledge (programmed), so a
// reconcile between full listings lists nothing at all: it compares the
// desired model with the remembered one service by service, validates
// what changed, plans those services against the remembered kernel lists
// (canonical order included) and writes only the difference. One real
// server drained is one netlink write and no read; one service added is
// its creation; one service removed is one delete. A service whose input
// is unchanged costs one comparison of its real servers.
//
// Drift, someone else changing IPVS behind the director's back, is not
// seen by such a reconcile. It is repaired two ways:
//
//   - A write the kernel refuses (the service or real server is not
//     where the director remembers it: deleted, re-created, added by
//     someone else) forgets everything, and the same reconcile starts
//     again from a full listing, which repairs it.
//   - A full listing (every service the director owns and its real
//     servers) on the first reconcile, after any failed or rejected one,
//     on ReconcileFull, and when the last full listing is older than
//     Options.FullListAfter. Drift that no write runs into (a weight
//     changed with ipvsadm -e, a foreign service added) is thus repaired
//     within FullListAfter plus one resync interval.
//
// The director never learns about foreign services from its memory and so
// never touches one: it only updates or deletes services it remembers
// programming; a service it creates that someone else holds already makes
// the creation fail (EEXIST), which sends the reconcile to a full listing
// and the ownership rules of listActual and buildPlan.

// programmed is what the director left in the kernel after its last
// successful reconcile; the zero value is empty (the next reconcile lists
// everything).
type programmed struct {
	services map[model.Key]*programmedService
	// order holds services in the order the last model gave them, so
	// that a model given in the same order is matched without a lookup.
	order   []*programmedService
	fullAt  time.Time // when the last full listing was taken
	foreign int       // foreign services seen at the last full listing
	// vipRanges are the VIP ranges of the model programmed.
	vipRanges []netip.Prefix
	// realServers and vips count what services holds: real servers, and
	// services per distinct VIP address.
	realServers int
	vips        map[netip.Addr]int
	// pass numbers the diffs, to tell the services a desired model names
	// from the ones it no longer does without a set per reconcile.
	pass uint64
}

// programmedService is one service as the director programmed it.
type programmedService struct {
	// input is the desired service as it was given (a copy the director
	// owns), compared first: an unchanged input needs no normalising.
	input model.Service
	// want is input with defaults applied and real servers in canonical
	// order: what was programmed.
	want model.Service
	// dests is the kernel's real-server list as the director's writes
	// left it, in list order.
	dests []actualDest
	seen  uint64 // the last diff pass that found it in the model
}

// fresh reports whether a reconcile at now may plan from memory.
func (p *programmed) fresh(now time.Time, maxAge time.Duration) bool {
	return p.services != nil && now.Sub(p.fullAt) < maxAge
}

// clear forgets everything: the next reconcile is a full listing.
func (p *programmed) clear() { *p = programmed{} }

// counts returns the services, real servers and distinct VIPs held.
func (p *programmed) counts() (services, realServers, vips int) {
	return len(p.services), p.realServers, len(p.vips)
}

// put remembers s (given as input, normalised as want) with its kernel
// list dests, replacing what was remembered for its key.
func (p *programmed) put(input, want model.Service, dests []actualDest) *programmedService {
	if p.services == nil {
		p.services = map[model.Key]*programmedService{}
		p.vips = map[netip.Addr]int{}
	}
	k := want.Key()
	p.remove(k)
	s := &programmedService{input: ownCopy(input), want: want, dests: dests, seen: p.pass}
	p.services[k] = s
	p.realServers += len(want.RealServers)
	p.vips[k.VIP]++
	return s
}

// remove forgets the service k, if remembered.
func (p *programmed) remove(k model.Key) {
	old, ok := p.services[k]
	if !ok {
		return
	}
	delete(p.services, k)
	p.realServers -= len(old.want.RealServers)
	if p.vips[k.VIP]--; p.vips[k.VIP] == 0 {
		delete(p.vips, k.VIP)
	}
}

// actual returns the service as the kernel holds it, for planning.
func (s *programmedService) actual() actualService {
	return actualService{Key: s.want.Key(), Scheduler: string(s.want.Scheduler), Flags: model.FlagBits(s.want.Flags), Dests: s.dests}
}

// rememberListed replaces the memory after a successful reconcile planned
// from a full listing: desired is the model as given, sorted the same
// model normalised, actual the listing and p the plan that was applied.
func (p *programmed) rememberListed(desired, sorted model.Desired, actual actualState, plan Plan, listedAt time.Time) {
	*p = programmed{fullAt: listedAt, foreign: actual.Foreign, vipRanges: slices.Clone(desired.VIPRanges)}
	changes := destinationPlans(plan)
	want := byKey(sorted)
	for _, in := range desired.Services {
		k := in.Key()
		s := want[k]
		dests := createdList(s)
		if a, existed := actual.Services[k]; existed {
			dests = afterPlan(a.Dests, changes[k])
		}
		p.order = append(p.order, p.put(in, s, dests))
	}
	if p.services == nil {
		p.services = map[model.Key]*programmedService{} // empty, not unknown
		p.vips = map[netip.Addr]int{}
	}
}

// rememberChanges updates the memory after a successful reconcile planned
// from it: d is the diff it planned, plan what was applied.
func (p *programmed) rememberChanges(desired model.Desired, d diff, plan Plan) {
	p.vipRanges = slices.Clone(desired.VIPRanges)
	changes := destinationPlans(plan)
	for _, c := range d.changed {
		dests := createdList(c.want)
		if old, existed := p.services[c.want.Key()]; existed {
			dests = afterPlan(old.dests, changes[c.want.Key()])
		}
		d.order[c.index] = p.put(c.input, c.want, dests)
	}
	for _, k := range d.gone {
		p.remove(k)
	}
	p.order = d.order
}

// destinationPlans indexes plan's real-server changes by service.
func destinationPlans(plan Plan) map[model.Key]*DestinationPlan {
	out := make(map[model.Key]*DestinationPlan, len(plan.Destinations))
	for i := range plan.Destinations {
		out[plan.Destinations[i].Service] = &plan.Destinations[i]
	}
	return out
}

// ownCopy returns s with its slices copied, so that a caller reusing
// them cannot change what the director remembers.
func ownCopy(s model.Service) model.Service {
	s.Flags = slices.Clone(s.Flags) // keeps nil (defaults) apart from empty (none)
	s.RealServers = slices.Clone(s.RealServers)
	return s
}

// byKey indexes desired (sorted, defaults applied) by service key.
func byKey(desired model.Desired) map[model.Key]model.Service {
	out := make(map[model.Key]model.Service, len(desired.Services))
	for _, s := range desired.Services {
		out[s.Key()] = s
	}
	return out
}

// sameService reports whether a and b (sorted, defaults applied) program
// the same kernel state.
func sameService(a, b model.Service) bool {
	return a.Key() == b.Key() && a.Scheduler == b.Scheduler && model.FlagBits(a.Flags) == model.FlagBits(b.Flags) &&
		a.Encap.Normal() == b.Encap.Normal() && slices.Equal(a.RealServers, b.RealServers)
}

// sameInput reports whether two services as given are identical, field by
// field (nil flags, the scheduler's defaults, differ from empty flags).
func sameInput(a, b model.Service) bool {
	return a.VIP == b.VIP && a.Protocol == b.Protocol && a.Port == b.Port && a.Scheduler == b.Scheduler && a.Encap == b.Encap &&
		(a.Flags == nil) == (b.Flags == nil) && slices.Equal(a.Flags, b.Flags) && slices.Equal(a.RealServers, b.RealServers)
}
