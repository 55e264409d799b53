package ipam

import (
	"fmt"
	"net/netip"
	"slices"
)

// choose picks a VIP for svc that satisfies req, without recording it.
// The caller holds a.mu.
func (a *Allocator) choose(svc string, req Request) (Allocation, error) {
	if req.Address.IsValid() {
		return a.chooseAddress(svc, req)
	}
	if req.Pool != "" {
		p, ok := a.cfg.pools[req.Pool]
		if !ok {
			return Allocation{}, fmt.Errorf("%w: no VIPPool %q", ErrNotInPool, req.Pool)
		}
		cl := a.cfg.clusters[p.L4Cluster]
		if req.Environment != "" && cl.Environment != req.Environment {
			return Allocation{}, fmt.Errorf("%w: VIPPool %q serves environment %q, not %q", ErrNotInPool, p.Name, cl.Environment, req.Environment)
		}
		if a.clusterUsage(cl.Name).Free == 0 {
			return Allocation{}, fmt.Errorf("%w in VIPPool %q: L4Cluster %q is full", ErrExhausted, p.Name, cl.Name)
		}
		if addr, ok := a.firstFree(p); ok {
			return a.describe(addr), nil
		}
		return Allocation{}, fmt.Errorf("%w in VIPPool %q", ErrExhausted, p.Name)
	}
	if req.Environment == "" {
		return Allocation{}, fmt.Errorf("%w: the request names no environment, pool or address", ErrNotInPool)
	}
	clusters := a.cfg.clustersIn(req.Environment)
	if len(clusters) == 0 {
		return Allocation{}, fmt.Errorf("%w: no L4Cluster serves environment %q", ErrNotInPool, req.Environment)
	}
	// Least loaded first: fewest used VIPs relative to capacity, then name.
	slices.SortStableFunc(clusters, func(x, y L4Cluster) int {
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
	for _, cl := range clusters {
		if a.clusterUsage(cl.Name).Free == 0 {
			continue
		}
		for _, name := range a.cfg.poolsOf[cl.Name] {
			if addr, ok := a.firstFree(a.cfg.pools[name]); ok {
				return a.describe(addr), nil
			}
		}
	}
	return Allocation{}, fmt.Errorf("%w in environment %q", ErrExhausted, req.Environment)
}

func (a *Allocator) chooseAddress(svc string, req Request) (Allocation, error) {
	addr := req.Address
	p, ok := a.cfg.poolOf(addr)
	if !ok {
		return Allocation{}, fmt.Errorf("%w: no VIPPool holds %s", ErrNotInPool, addr)
	}
	cl := a.cfg.clusters[p.L4Cluster]
	if req.Pool != "" && req.Pool != p.Name {
		return Allocation{}, fmt.Errorf("%w: %s is in VIPPool %q, not %q", ErrNotInPool, addr, p.Name, req.Pool)
	}
	if req.Environment != "" && req.Environment != cl.Environment {
		return Allocation{}, fmt.Errorf("%w: %s is in environment %q, not %q", ErrNotInPool, addr, cl.Environment, req.Environment)
	}
	if owner, ok := a.holder[addr]; ok && owner != svc {
		return Allocation{}, fmt.Errorf("%s: %w", addr, ErrInUse)
	}
	if cur, ok := a.byService[svc]; !ok || cur.L4Cluster != cl.Name {
		if a.clusterUsage(cl.Name).Free == 0 {
			return Allocation{}, fmt.Errorf("%w for %s: L4Cluster %q is full", ErrExhausted, addr, cl.Name)
		}
	}
	return a.describe(addr), nil
}

// firstFree returns the lowest free address of p. Its cost does not grow
// with the number of addresses taken (see prefixIndex).
func (a *Allocator) firstFree(p VIPPool) (netip.Addr, bool) {
	if a.poolUsed[p.Name] >= p.size() {
		return netip.Addr{}, false
	}
	for _, pfx := range p.Prefixes {
		if addr, ok := a.index[pfx].lowestFree(); ok {
			return addr, true
		}
	}
	return netip.Addr{}, false
}
