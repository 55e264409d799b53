package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// choose picks the VIPs for svc that satisfy req, without recording them.
// The caller holds a.mu. PreferDualStack falls back to one family, in the
// order of req.Families, when no L4 cluster can give every family.
func (a *Allocator) choose(svc string, req Request) ([]Allocation, error) {
	slots := req.slots()
	for _, addr := range req.Addresses {
		if !slices.ContainsFunc(slots, func(f Family) bool { return f.holds(addr) }) {
			return nil, fmt.Errorf("%w: %s is %s, and the request asks for %s", ErrNotInPool, addr, FamilyOf(addr), familyList(slots))
		}
	}
	als, err := a.chooseFamilies(svc, req, slots)
	if err == nil || req.Stack != PreferDualStack || len(slots) < 2 {
		return als, err
	}
	for _, f := range slots {
		if one, oneErr := a.chooseFamilies(svc, req, []Family{f}); oneErr == nil {
			return one, nil
		}
	}
	return nil, err
}

// chooseFamilies picks one VIP per family of slots, all in one L4
// cluster: the cluster of svc's current VIPs first, then the others the
// request allows, least loaded first.
func (a *Allocator) chooseFamilies(svc string, req Request, slots []Family) ([]Allocation, error) {
	clusters, err := a.candidates(svc, req)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, cl := range clusters {
		als, err := a.fill(svc, req, cl, slots)
		if err == nil {
			return als, nil
		}
		errs = append(errs, err)
	}
	if len(req.Addresses) > 0 || req.Pool != "" {
		return nil, errs[0] // one cluster, which the error names
	}
	if slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, ErrExhausted) }) {
		return nil, fmt.Errorf("%w in environment %q for %s", ErrExhausted, req.Environment, familyList(slots))
	}
	// No cluster has pools of every family asked for.
	return nil, fmt.Errorf("%w: no L4Cluster of environment %q has VIPPools of %s", ErrNotInPool, req.Environment, familyList(slots))
}

// candidates returns the L4 clusters that may serve req: the cluster of
// the requested addresses or pool, or the clusters of the environment,
// with svc's current cluster first and then the least loaded.
func (a *Allocator) candidates(svc string, req Request) ([]L4Cluster, error) {
	if len(req.Addresses) > 0 {
		var cl L4Cluster
		for i, addr := range req.Addresses {
			p, err := a.checkAddress(svc, req, addr)
			if err != nil {
				return nil, err
			}
			if i > 0 && p.L4Cluster != cl.Name {
				return nil, fmt.Errorf("%w: %s is in L4Cluster %q and %s in L4Cluster %q; the VIPs of one Service are served by one L4 cluster",
					ErrNotInPool, req.Addresses[0], cl.Name, addr, p.L4Cluster)
			}
			cl = a.cfg.clusters[p.L4Cluster]
		}
		return []L4Cluster{cl}, nil
	}
	if req.Pool != "" {
		p, ok := a.cfg.pools[req.Pool]
		if !ok {
			return nil, fmt.Errorf("%w: no VIPPool %q", ErrNotInPool, req.Pool)
		}
		cl := a.cfg.clusters[p.L4Cluster]
		if req.Environment != "" && cl.Environment != req.Environment {
			return nil, fmt.Errorf("%w: VIPPool %q serves environment %q, not %q", ErrNotInPool, p.Name, cl.Environment, req.Environment)
		}
		return []L4Cluster{cl}, nil
	}
	if req.Environment == "" {
		return nil, fmt.Errorf("%w: the request names no environment, pool or address", ErrNotInPool)
	}
	clusters := a.cfg.clustersIn(req.Environment)
	if len(clusters) == 0 {
		return nil, fmt.Errorf("%w: no L4Cluster serves environment %q", ErrNotInPool, req.Environment)
	}
	current := ""
	if cur := a.byService[svc]; len(cur) > 0 {
		current = cur[0].L4Cluster
	}
	// The current cluster, then least loaded first: fewest used VIPs
	// relative to capacity, then name.
	slices.SortStableFunc(clusters, func(x, y L4Cluster) int {
		switch {
		case x.Name == current:
			return -1
		case y.Name == current:
			return 1
		}
		lx := a.clusterUsed[x.Name] * uint64(y.Capacity)
		ly := a.clusterUsed[y.Name] * uint64(x.Capacity)
		switch {
		case lx < ly:
			return -1
		case lx > ly:
			return 1
		}
		return 0
	})
	return clusters, nil
}

// checkAddress returns the pool of a requested address, or why svc may
// not have it.
func (a *Allocator) checkAddress(svc string, req Request, addr netip.Addr) (VIPPool, error) {
	p, ok := a.cfg.poolOf(addr)
	if !ok {
		return VIPPool{}, fmt.Errorf("%w: no VIPPool holds %s", ErrNotInPool, addr)
	}
	cl := a.cfg.clusters[p.L4Cluster]
	if req.Pool != "" && req.Pool != p.Name {
		return VIPPool{}, fmt.Errorf("%w: %s is in VIPPool %q, not %q", ErrNotInPool, addr, p.Name, req.Pool)
	}
	if req.Environment != "" && req.Environment != cl.Environment {
		return VIPPool{}, fmt.Errorf("%w: %s is in environment %q, not %q", ErrNotInPool, addr, cl.Environment, req.Environment)
	}
	if owner, ok := a.holder[addr]; ok && owner != svc {
		return VIPPool{}, fmt.Errorf("%s: %w", addr, ErrInUse)
	}
	return p, nil
}

// fill picks one VIP of cl per family of slots: the requested address,
// else the one svc holds if it still fits, else the lowest free address
// of the first pool (by name) with one.
func (a *Allocator) fill(svc string, req Request, cl L4Cluster, slots []Family) ([]Allocation, error) {
	cur := a.byService[svc]
	var out []Allocation
	added := uint64(0) // VIPs svc does not hold in cl yet
	for _, f := range slots {
		if addr, ok := req.addressOf(f); ok {
			out = append(out, a.describe(addr))
			if !slices.ContainsFunc(cur, func(c Allocation) bool { return c.Address == addr && c.L4Cluster == cl.Name }) {
				added++
			}
			continue
		}
		if i := slices.IndexFunc(cur, func(c Allocation) bool {
			return f.holds(c.Address) && c.Pool != "" && c.L4Cluster == cl.Name && (req.Pool == "" || c.Pool == req.Pool)
		}); i >= 0 {
			out = append(out, cur[i])
			continue
		}
		addr, err := a.firstFreeIn(cl, req.Pool, f)
		if err != nil {
			return nil, err
		}
		out = append(out, a.describe(addr))
		added++
	}
	if used := a.clusterUsed[cl.Name]; used+added > uint64(cl.Capacity) {
		return nil, fmt.Errorf("%w: L4Cluster %q is full (%d of %d VIPs)", ErrExhausted, cl.Name, used, cl.Capacity)
	}
	return out, nil
}

// firstFreeIn returns the lowest free address of family f in the first
// pool of cl (by name; only pool when it is set) that has one.
func (a *Allocator) firstFreeIn(cl L4Cluster, pool string, f Family) (netip.Addr, error) {
	found := false // some pool has CIDRs of family f
	for _, name := range a.cfg.poolsOf[cl.Name] {
		if pool != "" && name != pool {
			continue
		}
		p := a.cfg.pools[name]
		if !slices.ContainsFunc(p.Prefixes, func(pfx netip.Prefix) bool { return f.holds(pfx.Addr()) }) {
			continue
		}
		found = true
		if addr, ok := a.firstFree(p, f); ok {
			return addr, nil
		}
	}
	where := fmt.Sprintf("L4Cluster %q", cl.Name)
	if pool != "" {
		where = fmt.Sprintf("VIPPool %q", pool)
	}
	if !found {
		return netip.Addr{}, fmt.Errorf("%w: %s has no %s CIDR", ErrNotInPool, where, f)
	}
	if f == AnyFamily {
		return netip.Addr{}, fmt.Errorf("%w in %s", ErrExhausted, where)
	}
	return netip.Addr{}, fmt.Errorf("%w of %s in %s", ErrExhausted, f, where)
}

// firstFree returns the lowest free address of family f in p. Its cost
// does not grow with the number of addresses taken (see prefixIndex).
func (a *Allocator) firstFree(p VIPPool, f Family) (netip.Addr, bool) {
	if a.poolUsed[p.Name] >= p.size() {
		return netip.Addr{}, false
	}
	for _, pfx := range p.Prefixes {
		if !f.holds(pfx.Addr()) {
			continue
		}
		if addr, ok := a.index[pfx].lowestFree(); ok {
			return addr, true
		}
	}
	return netip.Addr{}, false
}

// familyList names families for a message: "IPv4 and IPv6".
func familyList(fs []Family) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.String()
	}
	return strings.Join(names, " and ")
}
