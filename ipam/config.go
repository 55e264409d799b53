package ipam

import (
	"cmp"
	"math"
	"net/netip"
	"slices"
)

// Config is a validated set of L4 clusters and VIP pools. Build it with
// NewConfig; it is immutable afterwards.
type Config struct {
	clusters map[string]L4Cluster
	pools    map[string]VIPPool
	// poolsOf lists the pool names of each cluster, sorted.
	poolsOf map[string][]string
	// ranges are all prefixes, sorted by address, for address lookups.
	ranges []poolRange
}

// The kinds a ConfigError names.
const (
	kindCluster = "L4Cluster"
	kindPool    = "VIPPool"
)

type poolRange struct {
	prefix netip.Prefix
	pool   string
}

// NewConfig validates clusters and pools together and returns the Config.
// Errors name the object and the field to fix: empty or duplicate names, a
// cluster without environment or with a negative capacity, a pool naming an
// unknown cluster, an unmasked CIDR, or two CIDRs that overlap. The error
// is a *ConfigError naming the object.
func NewConfig(clusters []L4Cluster, pools []VIPPool) (*Config, error) {
	c := &Config{
		clusters: make(map[string]L4Cluster, len(clusters)),
		pools:    make(map[string]VIPPool, len(pools)),
		poolsOf:  make(map[string][]string, len(clusters)),
	}
	for _, cl := range clusters {
		switch {
		case cl.Name == "":
			return nil, configError(kindCluster, "", "L4Cluster with an empty name")
		case cl.Environment == "":
			return nil, configError(kindCluster, cl.Name, "L4Cluster %q: spec.environment is empty; name the environment it serves", cl.Name)
		case cl.Capacity < 0:
			return nil, configError(kindCluster, cl.Name, "L4Cluster %q: spec.capacity %d is negative", cl.Name, cl.Capacity)
		}
		if _, dup := c.clusters[cl.Name]; dup {
			return nil, configError(kindCluster, cl.Name, "L4Cluster %q is defined twice", cl.Name)
		}
		if cl.Capacity == 0 {
			cl.Capacity = DefaultL4ClusterCapacity
		}
		c.clusters[cl.Name] = cl
	}
	for _, p := range pools {
		if p.Name == "" {
			return nil, configError(kindPool, "", "VIPPool with an empty name")
		}
		if _, dup := c.pools[p.Name]; dup {
			return nil, configError(kindPool, p.Name, "VIPPool %q is defined twice", p.Name)
		}
		if _, ok := c.clusters[p.L4Cluster]; !ok {
			return nil, configError(kindPool, p.Name, "VIPPool %q: spec.l4Cluster %q names no L4Cluster", p.Name, p.L4Cluster)
		}
		if len(p.Prefixes) == 0 {
			return nil, configError(kindPool, p.Name, "VIPPool %q: spec.cidrs is empty", p.Name)
		}
		for i, pfx := range p.Prefixes {
			if !pfx.IsValid() || pfx != pfx.Masked() {
				return nil, configError(kindPool, p.Name, "VIPPool %q: spec.cidrs[%d] %s is not a network address (want %s)", p.Name, i, pfx, pfx.Masked())
			}
			c.ranges = append(c.ranges, poolRange{prefix: pfx, pool: p.Name})
		}
		p.Prefixes = slices.Clone(p.Prefixes)
		c.pools[p.Name] = p
		c.poolsOf[p.L4Cluster] = append(c.poolsOf[p.L4Cluster], p.Name)
	}
	for _, names := range c.poolsOf {
		slices.Sort(names)
	}
	slices.SortFunc(c.ranges, func(a, b poolRange) int {
		return cmp.Or(a.prefix.Addr().Compare(b.prefix.Addr()), cmp.Compare(a.prefix.Bits(), b.prefix.Bits()))
	})
	// CIDRs are nested or disjoint, so sorted by start address any overlap
	// shows between neighbours.
	for i := 1; i < len(c.ranges); i++ {
		a, b := c.ranges[i-1], c.ranges[i]
		if a.prefix.Overlaps(b.prefix) {
			return nil, configError(kindPool, b.pool, "VIPPool %q: CIDR %s overlaps CIDR %s of VIPPool %q", b.pool, b.prefix, a.prefix, a.pool)
		}
	}
	return c, nil
}

// poolOf returns the pool that holds addr: addr is in one of its CIDRs and
// not an address the pool avoids.
func (c *Config) poolOf(addr netip.Addr) (VIPPool, bool) {
	r, ok := c.rangeOf(addr)
	if !ok {
		return VIPPool{}, false
	}
	p := c.pools[r.pool]
	if p.AvoidBuggyIPs && isBuggy(addr) {
		return VIPPool{}, false
	}
	return p, true
}

// rangeOf returns the CIDR that contains addr.
func (c *Config) rangeOf(addr netip.Addr) (poolRange, bool) {
	i, _ := slices.BinarySearchFunc(c.ranges, addr, func(r poolRange, a netip.Addr) int {
		return r.prefix.Addr().Compare(a)
	})
	// The candidate is the last range starting at or before addr; nested
	// ranges are rejected, so there is at most one.
	for _, j := range []int{i, i - 1} {
		if j >= 0 && j < len(c.ranges) && c.ranges[j].prefix.Contains(addr) {
			return c.ranges[j], true
		}
	}
	return poolRange{}, false
}

// clustersIn returns the clusters of env sorted by name.
func (c *Config) clustersIn(env Environment) []L4Cluster {
	var out []L4Cluster
	for _, cl := range c.clusters {
		if cl.Environment == env {
			out = append(out, cl)
		}
	}
	slices.SortFunc(out, func(a, b L4Cluster) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// size is how many addresses the pool can hand out, saturated at MaxUint64.
func (p VIPPool) size() uint64 {
	var total uint64
	for _, pfx := range p.Prefixes {
		n := prefixSize(pfx)
		if p.AvoidBuggyIPs && pfx.Addr().Is4() {
			n -= buggyIn(pfx)
		}
		if total > math.MaxUint64-n {
			return math.MaxUint64
		}
		total += n
	}
	return total
}

func prefixSize(p netip.Prefix) uint64 {
	host := p.Addr().BitLen() - p.Bits()
	if host >= 64 {
		return math.MaxUint64
	}
	return 1 << host
}

// buggyIn counts the IPv4 addresses of p ending in .0 or .255.
func buggyIn(p netip.Prefix) uint64 {
	if p.Bits() <= 24 {
		return 2 << (24 - p.Bits())
	}
	var n uint64
	for a := p.Addr(); a.IsValid() && p.Contains(a); a = a.Next() {
		if isBuggy(a) {
			n++
		}
	}
	return n
}

func isBuggy(a netip.Addr) bool {
	if !a.Is4() {
		return false
	}
	last := a.As4()[3]
	return last == 0 || last == 255
}
