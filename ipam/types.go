package ipam

import "net/netip"

// DefaultL4ClusterCapacity is how many VIPs an L4 cluster serves when its
// definition does not say.
const DefaultL4ClusterCapacity = 1000

// Environment names an isolated group of L4 clusters (Feature, Dev, LnP,
// Staging, Production, ...). A VIP never crosses environments.
type Environment string

// L4Cluster is a set of directors that announce and serve a group of VIPs.
type L4Cluster struct {
	// Name identifies the cluster.
	Name string
	// Environment is the environment the cluster serves.
	Environment Environment
	// Capacity is the most VIPs the cluster may hold; 0 means
	// DefaultL4ClusterCapacity.
	Capacity int
}

// VIPPool is a set of CIDRs whose addresses an L4 cluster may hand out.
type VIPPool struct {
	// Name identifies the pool.
	Name string
	// L4Cluster is the name of the L4 cluster that serves the pool.
	L4Cluster string
	// Prefixes are the CIDRs of the pool, of either family or both: a
	// pool with CIDRs of both families serves dual-stack Services alone.
	Prefixes []netip.Prefix
	// AvoidBuggyIPs skips addresses ending in .0 and .255 (IPv4 only),
	// which some clients mishandle.
	AvoidBuggyIPs bool
}

// Request is what a Service asks for. Zero fields mean "any". The VIPs of
// one Service (one per family) always come from one L4 cluster, whose
// directors serve them all.
type Request struct {
	// Environment restricts the choice to L4 clusters of that environment.
	Environment Environment
	// Pool restricts the choice to one pool.
	Pool string
	// Addresses asks for specific VIPs, at most one per family.
	Addresses []netip.Addr
	// Families are the families wanted, in order (a Service's
	// spec.ipFamilies). None: the families of Addresses, or else one VIP
	// of any family.
	Families []Family
	// Stack says whether one VIP per family is wanted (see StackPolicy).
	Stack StackPolicy
}

// Allocation is a VIP given to one Service.
type Allocation struct {
	// Address is the VIP.
	Address netip.Addr
	// Pool is the pool the VIP came from.
	Pool string
	// L4Cluster is the L4 cluster that serves the VIP.
	L4Cluster string
	// Environment is the environment of that L4 cluster.
	Environment Environment
}

// Usage counts the addresses of a pool or an L4 cluster.
type Usage struct {
	// Used is how many VIPs are allocated.
	Used uint64
	// Free is how many more can be allocated (for an L4 cluster, bounded by
	// its capacity as well as by its pools).
	Free uint64
}
