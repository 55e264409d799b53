package director

import (
	"net/netip"
	"slices"

	"github.com/tlbproject/tlb/tlb/model"
)

// Real-server order and the Maglev table.
//
// ip_vs_mh (and sh, dh) fill their lookup table by walking the service's
// real-server list in list order, and the kernel inserts every new real
// server at the HEAD of that list. So the table depends on the history of
// adds and deletes, not only on the set: a director that has seen churn
// can disagree with a fresh one about where a flow goes, and each such
// flow is a connection broken when traffic moves between directors.
//
// The director therefore fixes one target list order, the canonical order
// (real servers sorted by address, model.Service.Canonical), and reaches it
// from any actual order:
//
//   - A fresh director adds real servers in reverse canonical order; each
//     lands at the head, so the kernel list ends up in canonical order.
//   - From an actual list, real servers no longer wanted are deleted first
//     (that keeps the relative order of the rest). Then the longest suffix
//     of what remains that already equals the tail of the canonical order
//     is kept; every real server in front of it is deleted, and the missing
//     head of the canonical order is added back to front.
//   - A weight change keeps a real server's position (updated in place).
//
// Deleting and promptly re-adding a real server keeps its connections:
// the kernel parks a deleted destination that still has connections and
// revives the same one when it is added back.

// actualDest is one destination as the kernel lists it.
type actualDest struct {
	Addr   netip.AddrPort
	Weight int
	Fwd    uint32
	// Encap is the real server's tunnel (normalised: IPIP is the zero
	// value).
	Encap model.Encap
}

// DestinationPlan is the change to one existing service's real servers.
type DestinationPlan struct {
	Service model.Key
	// Encap is the service's tunnel: updated and added real servers get
	// it.
	Encap model.Encap
	// Delete lists real servers to delete, in order: first those not
	// wanted, then those out of canonical position.
	Delete []netip.AddrPort
	// Update lists real servers whose weight, forwarding or tunnel
	// changes in place (their list position is right).
	Update []model.RealServer
	// Add lists real servers to add, in this order (each goes to the
	// head of the kernel's list).
	Add []model.RealServer
	// Kept counts real servers left as they are.
	Kept int
}

// Empty reports whether the plan changes nothing.
func (p DestinationPlan) Empty() bool {
	return len(p.Delete) == 0 && len(p.Update) == 0 && len(p.Add) == 0
}

// orderMatters reports whether the scheduler's choice depends on the
// real-server list order (table-based hashing schedulers).
func orderMatters(s model.Scheduler) bool {
	return s == model.Maglev || s == model.SourceHashing || s == model.DestinationHashing
}

// addOrder returns the order in which a fresh director adds real servers
// so that the kernel list ends up equal to wanted: back to front.
func addOrder(wanted []model.RealServer) []model.RealServer {
	out := slices.Clone(wanted)
	slices.Reverse(out)
	return out
}

// planDestinations plans the change from the actual kernel list to wanted
// (in canonical order) for a service on port whose real servers are
// reached through encap. When ordered is false only the set, weights and
// tunnels matter.
func planDestinations(key model.Key, actual []actualDest, wanted []model.RealServer, ordered bool, encap model.Encap) DestinationPlan {
	encap = encap.Normal()
	p := DestinationPlan{Service: key, Encap: encap}
	want := make(map[netip.AddrPort]model.RealServer, len(wanted))
	for _, rs := range wanted {
		want[netip.AddrPortFrom(rs.Addr, key.Port)] = rs
	}
	// Real servers not wanted go first; what remains keeps its order.
	remaining := make([]actualDest, 0, len(actual))
	for _, d := range actual {
		if _, ok := want[d.Addr]; ok {
			remaining = append(remaining, d)
		} else {
			p.Delete = append(p.Delete, d.Addr)
		}
	}

	changed := func(d actualDest) bool {
		rs := want[d.Addr]
		return d.Weight != rs.Weight || d.Fwd != tunnelFwd || d.Encap != encap
	}

	if !ordered {
		present := make(map[netip.AddrPort]bool, len(remaining))
		for _, d := range remaining {
			present[d.Addr] = true
			if changed(d) {
				p.Update = append(p.Update, want[d.Addr])
			} else {
				p.Kept++
			}
		}
		for _, rs := range addOrder(wanted) {
			if !present[netip.AddrPortFrom(rs.Addr, key.Port)] {
				p.Add = append(p.Add, rs)
			}
		}
		return p
	}

	// Longest suffix of remaining that equals the tail of wanted.
	k := 0
	for k < len(remaining) && k < len(wanted) {
		d := remaining[len(remaining)-1-k]
		if d.Addr.Addr() != wanted[len(wanted)-1-k].Addr {
			break
		}
		k++
	}
	for _, d := range remaining[:len(remaining)-k] {
		p.Delete = append(p.Delete, d.Addr)
	}
	for _, d := range remaining[len(remaining)-k:] {
		if changed(d) {
			p.Update = append(p.Update, want[d.Addr])
		} else {
			p.Kept++
		}
	}
	p.Add = addOrder(wanted[:len(wanted)-k])
	return p
}

// afterPlan returns the kernel's list once dp (nil: nothing) is applied to
// before, the way the kernel applies it: deletes keep the order of the
// rest, updates keep positions, and each add goes to the head.
func afterPlan(before []actualDest, dp *DestinationPlan) []actualDest {
	if dp == nil {
		return before
	}
	out := make([]actualDest, 0, len(before)+len(dp.Add))
	for i := len(dp.Add) - 1; i >= 0; i-- {
		out = append(out, toDest(dp.Add[i], dp.Service.Port, dp.Encap))
	}
	for _, d := range before {
		if !slices.Contains(dp.Delete, d.Addr) {
			out = append(out, d)
		}
	}
	for _, rs := range dp.Update {
		addr := netip.AddrPortFrom(rs.Addr, dp.Service.Port)
		if i := slices.IndexFunc(out, func(d actualDest) bool { return d.Addr == addr }); i >= 0 {
			out[i] = toDest(rs, dp.Service.Port, dp.Encap)
		}
	}
	return out
}

// createdList returns the kernel's list of a service created with want's
// real servers (canonical order, added back to front): want's order.
func createdList(want model.Service) []actualDest {
	out := make([]actualDest, 0, len(want.RealServers))
	for _, rs := range want.RealServers {
		out = append(out, toDest(rs, want.Port, want.Encap))
	}
	return out
}

// toDest is real server rs of a service on port, reached through encap,
// as the kernel lists it.
func toDest(rs model.RealServer, port uint16, encap model.Encap) actualDest {
	return actualDest{Addr: netip.AddrPortFrom(rs.Addr, port), Weight: rs.Weight, Fwd: tunnelFwd, Encap: encap.Normal()}
}
