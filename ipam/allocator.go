package ipam

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"
)

// Allocator hands out VIPs from the pools of a Config to Services (one per
// address family the Service asks for, all from one L4 cluster), named by
// an opaque key (the controller uses "namespace/name"). It is safe for
// concurrent use. It holds allocations in memory only: after a restart the
// caller rebuilds them with Assign and Reserve from what the API server
// recorded.
//
// An address that any Service holds is never handed out: the VIPs of the
// Services it serves (Assign, Allocate), whether or not a loaded pool holds
// them, and the addresses other Services hold (Reserve).
type Allocator struct {
	mu  sync.Mutex
	cfg *Config
	// byService holds the VIPs of each Service, at most one per family,
	// in the order the Service asked for the families.
	byService map[string][]Allocation
	// foreign are the addresses of Services TLB does not serve.
	foreign map[string][]netip.Addr
	// holder maps every held address to the Service holding it.
	holder map[netip.Addr]string
	// index finds the lowest free address of each CIDR of cfg.
	index map[netip.Prefix]*prefixIndex
	// poolUsed counts the held addresses of each pool.
	poolUsed map[string]uint64
	// clusterUsed counts VIPs per L4 cluster; the scheduler reads it.
	clusterUsed map[string]uint64
}

// New returns an Allocator over cfg with no allocations.
func New(cfg *Config) *Allocator {
	a := &Allocator{
		byService: map[string][]Allocation{},
		foreign:   map[string][]netip.Addr{},
		holder:    map[netip.Addr]string{},
	}
	a.SetConfig(cfg)
	return a
}

// SetConfig replaces the pools and clusters. Every held address stays held
// (a live VIP is never taken away); the pool and cluster of each allocation
// are looked up again by address, and an address no pool holds keeps its
// owner with an empty Pool, so that it is not handed to anyone else when a
// pool holding it comes (back).
func (a *Allocator) SetConfig(cfg *Config) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg = cfg
	a.poolUsed = map[string]uint64{}
	a.clusterUsed = map[string]uint64{}
	a.index = make(map[netip.Prefix]*prefixIndex, len(cfg.ranges))
	for _, r := range cfg.ranges {
		a.index[r.prefix] = newPrefixIndex(r.prefix, cfg.pools[r.pool].AvoidBuggyIPs)
	}
	for svc, als := range a.byService {
		for i, al := range als {
			als[i] = a.describe(al.Address)
		}
		a.byService[svc] = als
	}
	for addr, svc := range a.holder {
		_, reserved := a.foreign[svc]
		a.take(addr, !reserved)
	}
}

// Lookup returns the allocations of svc, one per family it holds.
func (a *Allocator) Lookup(svc string) ([]Allocation, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	als, ok := a.byService[svc]
	return slices.Clone(als), ok
}

// Assign records that svc already holds addr, as read back from the API
// server: it joins the VIPs svc holds, replacing one of the same family.
// It is idempotent and fails only when another Service holds addr. An
// address in no loaded pool is recorded too, with an empty Pool: it is
// held all the same.
func (a *Allocator) Assign(svc string, addr netip.Addr) (Allocation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if owner, ok := a.holder[addr]; ok && owner != svc {
		return Allocation{}, fmt.Errorf("assign %s to %s: %w (held by %s)", addr, svc, ErrInUse, owner)
	}
	al := a.describe(addr)
	als := slices.DeleteFunc(slices.Clone(a.byService[svc]), func(x Allocation) bool {
		return FamilyOf(x.Address) == FamilyOf(addr)
	})
	a.record(svc, append(als, al))
	return al, nil
}

// Reserve records that holder, a Service that TLB does not serve, holds
// addrs in its status, so that no allocation hands them out. It replaces
// holder's earlier reservations; no addrs drops them. Addresses another
// Service already holds are not reserved: they are returned.
func (a *Allocator) Reserve(holder string, addrs []netip.Addr) (conflicts []netip.Addr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releaseLocked(holder)
	var kept []netip.Addr
	for _, addr := range addrs {
		if owner, ok := a.holder[addr]; ok {
			if owner != holder {
				conflicts = append(conflicts, addr)
			}
			continue
		}
		kept = append(kept, addr)
		a.holder[addr] = holder
		a.take(addr, false)
	}
	if len(kept) > 0 {
		a.foreign[holder] = kept
	}
	return conflicts
}

// Allocate gives svc the VIPs that satisfy req, one per family it asks
// for, in its order. A VIP svc already holds that still satisfies req is
// kept, and with it the L4 cluster. When the request changed, the new VIPs
// are chosen first and the old ones released only on success, so a
// failed request changes nothing.
func (a *Allocator) Allocate(svc string, req Request) ([]Allocation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	als, err := a.choose(svc, req)
	if err != nil {
		return nil, fmt.Errorf("allocate a VIP for %s: %w", svc, err)
	}
	a.record(svc, als)
	return slices.Clone(als), nil
}

// Release frees what svc holds (its VIPs or its reservations) and returns
// its allocations; ok is false when svc held no VIP.
func (a *Allocator) Release(svc string) ([]Allocation, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.releaseLocked(svc)
}

func (a *Allocator) releaseLocked(svc string) ([]Allocation, bool) {
	for _, addr := range a.foreign[svc] {
		a.free(addr, false)
		delete(a.holder, addr)
	}
	delete(a.foreign, svc)
	als, ok := a.byService[svc]
	if !ok {
		return nil, false
	}
	for _, al := range als {
		a.free(al.Address, true)
		delete(a.holder, al.Address)
	}
	delete(a.byService, svc)
	return als, true
}

// PoolUsage counts the used and free addresses of a pool. Used counts
// every held address, reservations of other Services included.
func (a *Allocator) PoolUsage(pool string) Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.cfg.pools[pool]
	if !ok {
		return Usage{}
	}
	used := a.poolUsed[pool]
	return Usage{Used: used, Free: p.size() - min(used, p.size())}
}

// ClusterUsage counts the used VIPs of an L4 cluster and how many more it
// can take, bounded by both its capacity and the free addresses of its
// pools.
func (a *Allocator) ClusterUsage(cluster string) Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.clusterUsage(cluster)
}

func (a *Allocator) clusterUsage(cluster string) Usage {
	cl, ok := a.cfg.clusters[cluster]
	if !ok {
		return Usage{}
	}
	used := a.clusterUsed[cluster]
	capLeft := uint64(cl.Capacity) - min(used, uint64(cl.Capacity))
	var poolFree uint64
	for _, name := range a.cfg.poolsOf[cluster] {
		p := a.cfg.pools[name]
		n := p.size() - min(a.poolUsed[name], p.size())
		poolFree = addSaturating(poolFree, n)
	}
	return Usage{Used: used, Free: min(capLeft, poolFree)}
}

// describe fills in pool, cluster and environment of addr from the config.
func (a *Allocator) describe(addr netip.Addr) Allocation {
	al := Allocation{Address: addr}
	if p, ok := a.cfg.poolOf(addr); ok {
		cl := a.cfg.clusters[p.L4Cluster]
		al.Pool, al.L4Cluster, al.Environment = p.Name, cl.Name, cl.Environment
	}
	return al
}

// record gives als to svc, releasing what else svc held before.
func (a *Allocator) record(svc string, als []Allocation) {
	for _, old := range a.byService[svc] {
		if !slices.ContainsFunc(als, func(al Allocation) bool { return al.Address == old.Address }) {
			a.free(old.Address, true)
			delete(a.holder, old.Address)
		}
	}
	for _, addr := range a.foreign[svc] {
		a.free(addr, false)
		delete(a.holder, addr)
	}
	delete(a.foreign, svc)
	for _, al := range als {
		if _, held := a.holder[al.Address]; !held {
			a.holder[al.Address] = svc
			a.take(al.Address, true)
		}
	}
	a.byService[svc] = slices.Clone(als)
}

// take marks addr held in the free index and the counters of its pool
// and, for an allocation (not a reservation), of its L4 cluster.
func (a *Allocator) take(addr netip.Addr, allocation bool) { a.count(addr, allocation, 1) }

// free undoes take.
func (a *Allocator) free(addr netip.Addr, allocation bool) { a.count(addr, allocation, -1) }

func (a *Allocator) count(addr netip.Addr, allocation bool, d int) {
	r, ok := a.cfg.rangeOf(addr)
	if !ok {
		return
	}
	if x := a.index[r.prefix]; d > 0 {
		x.take(addr)
	} else {
		x.free(addr)
	}
	p, ok := a.cfg.poolOf(addr)
	if !ok {
		return // a buggy address of a pool that avoids them
	}
	step := func(m map[string]uint64, k string) {
		if d > 0 {
			m[k]++
		} else {
			m[k]--
		}
	}
	step(a.poolUsed, p.Name)
	if allocation {
		step(a.clusterUsed, p.L4Cluster)
	}
}

// addSaturating adds without wrapping; IPv6 pools can be larger than uint64.
func addSaturating(a, b uint64) uint64 {
	if a > ^uint64(0)-b {
		return ^uint64(0)
	}
	return a + b
}
