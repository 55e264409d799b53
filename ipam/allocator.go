package ipam

import (
	"fmt"
	"net/netip"
	"sync"
)

// Allocator hands out VIPs from the pools of a Config to Services, named by
// an opaque key (the controller uses "namespace/name"). It is safe for
// concurrent use. It holds allocations in memory only: after a restart the
// caller rebuilds them with Assign from what the API server recorded.
type Allocator struct {
	mu        sync.Mutex
	cfg       *Config
	byService map[string]Allocation
	byAddr    map[netip.Addr]string
	poolUsed  map[string]uint64
	// clusterUsed counts VIPs per L4 cluster; the scheduler reads it.
	clusterUsed map[string]uint64
}

// New returns an Allocator over cfg with no allocations.
func New(cfg *Config) *Allocator {
	a := &Allocator{
		byService: map[string]Allocation{},
		byAddr:    map[netip.Addr]string{},
	}
	a.SetConfig(cfg)
	return a
}

// SetConfig replaces the pools and clusters. Existing allocations are kept
// (a live VIP is never taken away); their pool and cluster are looked up
// again by address, and an address no pool holds any more keeps its owner
// with an empty Pool, so that it is not handed to anyone else.
func (a *Allocator) SetConfig(cfg *Config) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg = cfg
	a.poolUsed = map[string]uint64{}
	a.clusterUsed = map[string]uint64{}
	for svc, al := range a.byService {
		al = a.describe(al.Address)
		a.byService[svc] = al
		a.count(al, 1)
	}
}

// Lookup returns the allocation of svc.
func (a *Allocator) Lookup(svc string) (Allocation, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	al, ok := a.byService[svc]
	return al, ok
}

// Assign records that svc already holds addr, as read back from the API
// server on start. It is idempotent; it fails when addr is in no pool or
// when another Service holds it.
func (a *Allocator) Assign(svc string, addr netip.Addr) (Allocation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.cfg.poolOf(addr); !ok {
		return Allocation{}, fmt.Errorf("assign %s to %s: %w: no VIP pool holds the address", addr, svc, ErrNotInPool)
	}
	if owner, ok := a.byAddr[addr]; ok && owner != svc {
		return Allocation{}, fmt.Errorf("assign %s to %s: %w", addr, svc, ErrInUse)
	}
	al := a.describe(addr)
	a.record(svc, al)
	return al, nil
}

// Allocate gives svc a VIP that satisfies req. When svc already holds one
// that satisfies req, that one is returned unchanged. When it holds one that
// does not (the request changed), the new VIP is chosen first and the old
// one released only on success, so a failed request changes nothing.
func (a *Allocator) Allocate(svc string, req Request) (Allocation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := a.byService[svc]; ok && satisfies(cur, req) {
		return cur, nil
	}
	al, err := a.choose(svc, req)
	if err != nil {
		return Allocation{}, fmt.Errorf("allocate a VIP for %s: %w", svc, err)
	}
	a.record(svc, al)
	return al, nil
}

// Release frees the VIP of svc and returns it; ok is false when svc held
// none.
func (a *Allocator) Release(svc string) (Allocation, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	al, ok := a.byService[svc]
	if !ok {
		return Allocation{}, false
	}
	delete(a.byService, svc)
	delete(a.byAddr, al.Address)
	a.count(al, -1)
	return al, true
}

// PoolUsage counts the used and free addresses of a pool.
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

func (a *Allocator) record(svc string, al Allocation) {
	if old, ok := a.byService[svc]; ok {
		delete(a.byAddr, old.Address)
		a.count(old, -1)
	}
	a.byService[svc] = al
	a.byAddr[al.Address] = svc
	a.count(al, 1)
}

func (a *Allocator) count(al Allocation, d int) {
	if al.Pool == "" {
		return
	}
	if d > 0 {
		a.poolUsed[al.Pool]++
		a.clusterUsed[al.L4Cluster]++
		return
	}
	a.poolUsed[al.Pool]--
	a.clusterUsed[al.L4Cluster]--
}

func satisfies(al Allocation, req Request) bool {
	switch {
	case al.Pool == "":
		return false
	case req.Address.IsValid() && al.Address != req.Address:
		return false
	case req.Pool != "" && al.Pool != req.Pool:
		return false
	case req.Environment != "" && al.Environment != req.Environment:
		return false
	}
	return true
}

// addSaturating adds without wrapping; IPv6 pools can be larger than uint64.
func addSaturating(a, b uint64) uint64 {
	if a > ^uint64(0)-b {
		return ^uint64(0)
	}
	return a + b
}
