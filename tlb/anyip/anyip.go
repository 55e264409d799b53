// Package anyip makes a director's VIP ranges local, so that packets to any
// VIP reach IPVS (which hooks LOCAL_IN) without binding each address: one
// route of type "local" per VIP range in the kernel's local table
// ("AnyIP"), marked with TLB's own route protocol number.
//
// It owns only the routes that carry that protocol number in the local
// table; every other route, local or not, is left alone.
package anyip

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sort"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// RouteProtocol marks the routes this package owns (an unassigned value in
// /etc/iproute2/rt_protos; `ip route show table local proto 241`).
const RouteProtocol netlink.RouteProtocol = 241

// Routes is the narrow slice of netlink this package uses.
type Routes interface {
	RouteListFiltered(family int, filter *netlink.Route, mask uint64) ([]netlink.Route, error)
	RouteReplace(route *netlink.Route) error
	RouteDel(route *netlink.Route) error
	LinkByName(name string) (netlink.Link, error)
}

// Plan is the difference between the wanted and the actual VIP ranges.
type Plan struct {
	Add    []netip.Prefix
	Delete []netip.Prefix
	Keep   []netip.Prefix
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool { return len(p.Add) == 0 && len(p.Delete) == 0 }

// Reconciler keeps the local routes for a director's VIP ranges.
type Reconciler struct {
	nl  Routes
	log *slog.Logger
}

// New returns a Reconciler using the netlink handle nl (one per namespace).
func New(nl Routes, log *slog.Logger) *Reconciler { return &Reconciler{nl: nl, log: log} }

// Actual lists the VIP ranges this package has made local.
func (r *Reconciler) Actual() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		routes, err := r.nl.RouteListFiltered(fam, &netlink.Route{Table: unix.RT_TABLE_LOCAL, Protocol: RouteProtocol},
			netlink.RT_FILTER_TABLE|netlink.RT_FILTER_PROTOCOL)
		for errors.Is(err, netlink.ErrDumpInterrupted) {
			routes, err = r.nl.RouteListFiltered(fam, &netlink.Route{Table: unix.RT_TABLE_LOCAL, Protocol: RouteProtocol},
				netlink.RT_FILTER_TABLE|netlink.RT_FILTER_PROTOCOL)
		}
		if err != nil {
			return nil, fmt.Errorf("list local routes of VIP ranges: %w", err)
		}
		for _, rt := range routes {
			if rt.Dst == nil || rt.Type != unix.RTN_LOCAL {
				continue
			}
			if p, ok := prefixOf(rt.Dst); ok {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// PlanFor computes the diff between want and actual.
func PlanFor(want, actual []netip.Prefix) Plan {
	have := map[netip.Prefix]bool{}
	for _, p := range actual {
		have[p.Masked()] = true
	}
	var plan Plan
	wanted := map[netip.Prefix]bool{}
	for _, p := range want {
		p = p.Masked()
		if wanted[p] {
			continue
		}
		wanted[p] = true
		if have[p] {
			plan.Keep = append(plan.Keep, p)
		} else {
			plan.Add = append(plan.Add, p)
		}
	}
	for p := range have {
		if !wanted[p] {
			plan.Delete = append(plan.Delete, p)
		}
	}
	for _, s := range [][]netip.Prefix{plan.Add, plan.Delete, plan.Keep} {
		sort.Slice(s, func(i, j int) bool { return s[i].String() < s[j].String() })
	}
	return plan
}

// Reconcile makes exactly the ranges in want local and returns what it did.
func (r *Reconciler) Reconcile(_ context.Context, want []netip.Prefix) (Plan, error) {
	actual, err := r.Actual()
	if err != nil {
		return Plan{}, err
	}
	plan := PlanFor(want, actual)
	if plan.Empty() {
		return plan, nil
	}
	lo, err := r.nl.LinkByName("lo")
	if err != nil {
		return plan, fmt.Errorf("find lo for VIP ranges: %w", err)
	}
	for _, p := range plan.Add {
		if err := r.nl.RouteReplace(route(p, lo)); err != nil {
			return plan, fmt.Errorf("make VIP range %s local: %w", p, err)
		}
		r.log.Info("VIP range made local", "vipRange", p)
	}
	for _, p := range plan.Delete {
		if err := r.nl.RouteDel(route(p, lo)); err != nil {
			return plan, fmt.Errorf("remove local route of VIP range %s: %w", p, err)
		}
		r.log.Info("VIP range no longer local", "vipRange", p)
	}
	return plan, nil
}

func route(p netip.Prefix, lo netlink.Link) *netlink.Route {
	return &netlink.Route{
		LinkIndex: lo.Attrs().Index,
		Dst:       &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())},
		Table:     unix.RT_TABLE_LOCAL,
		Type:      unix.RTN_LOCAL,
		Scope:     netlink.SCOPE_HOST,
		Protocol:  RouteProtocol,
	}
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones), true
}
