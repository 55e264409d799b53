package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VIPPool is a cluster-scoped set of CIDRs whose addresses one L4 cluster
// hands out as VIPs.
type VIPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VIPPoolSpec   `json:"spec"`
	Status VIPPoolStatus `json:"status,omitempty"`
}

// VIPPoolSpec is the desired pool.
type VIPPoolSpec struct {
	// CIDRs are the networks of the pool (e.g. 203.0.113.0/24).
	CIDRs []string `json:"cidrs"`
	// L4Cluster is the metadata.name of the L4Cluster that serves the pool.
	L4Cluster string `json:"l4Cluster"`
	// AvoidBuggyIPs skips IPv4 addresses ending in .0 and .255.
	AvoidBuggyIPs bool `json:"avoidBuggyIPs,omitempty"`
	// BGP says how the directors announce the pool's routes; nil sends
	// them with no community, the router's default local preference and
	// no aggregation.
	BGP *VIPPoolBGP `json:"bgp,omitempty"`
}

// VIPPoolBGP is how the routes of a pool are announced.
type VIPPoolBGP struct {
	// Communities are standard communities (RFC 1997), "ASN:VALUE" with
	// both parts 0..65535, on every route of the pool.
	Communities []string `json:"communities,omitempty"`
	// LargeCommunities are large communities (RFC 8092),
	// "GLOBAL:LOCAL1:LOCAL2" with each part 0..4294967295.
	LargeCommunities []string `json:"largeCommunities,omitempty"`
	// LocalPreference is the LOCAL_PREF of the routes, 0..4294967295. BGP
	// sends it to iBGP peers only (same AS as the director).
	LocalPreference *int64 `json:"localPreference,omitempty"`
	// AggregationLength, when set, announces the pool's routes as their
	// covering prefix of this length (e.g. 24: one /24 however many VIPs
	// of it are up). At least the length of every CIDR, at most 32 for
	// IPv4 CIDRs and 128 for IPv6 ones.
	AggregationLength *int32 `json:"aggregationLength,omitempty"`
}

// VIPPoolStatus counts the addresses of the pool and says whether VIPs
// are allocated from it. The ipam controller writes it.
type VIPPoolStatus struct {
	// Used is how many VIPs of the pool are allocated.
	Used int64 `json:"used"`
	// Free is how many addresses are left (saturated at 2^63-1).
	Free int64 `json:"free"`
	// Conditions hold ConditionReady.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VIPPoolList is a list of VIPPools.
type VIPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []VIPPool `json:"items"`
}

// L4Cluster is a cluster-scoped group of directors that serves the VIPs of
// its pools in one environment.
type L4Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   L4ClusterSpec   `json:"spec"`
	Status L4ClusterStatus `json:"status,omitempty"`
}

// L4ClusterSpec is the desired cluster.
type L4ClusterSpec struct {
	// Environment is the environment the cluster serves (e.g. production).
	Environment string `json:"environment"`
	// Capacity is the most VIPs the cluster takes; the schema defaults it to
	// 1000.
	Capacity int32 `json:"capacity,omitempty"`
	// Encapsulation is how the cluster's directors tunnel packets to the
	// gateways; absent means IPIP.
	Encapsulation *Encapsulation `json:"encapsulation,omitempty"`
}

// Encapsulation types of an L4 cluster.
const (
	// EncapsulationIPIP is IPv4-in-IPv4, the default.
	EncapsulationIPIP = "ipip"
	// EncapsulationGUE is Generic UDP Encapsulation: the outer UDP source
	// port carries each flow's hash, so NICs and routers spread flows.
	// The gateways' netd must receive GUE on Port (netd.gue.port).
	EncapsulationGUE = "gue"
)

// Encapsulation is an L4 cluster's tunnel to its gateways.
type Encapsulation struct {
	// Type is "ipip" or "gue".
	Type string `json:"type"`
	// Port is the UDP port the gateways receive GUE on: required for
	// gue, absent for ipip.
	Port int32 `json:"port,omitempty"`
}

// L4ClusterStatus counts the VIPs of the cluster and says whether VIPs
// are allocated to it. The ipam controller writes it.
type L4ClusterStatus struct {
	// Used is how many VIPs the cluster serves.
	Used int64 `json:"used"`
	// Free is how many more it can take, bounded by capacity and pools.
	Free int64 `json:"free"`
	// Pools is how many VIPPools name this cluster.
	Pools int32 `json:"pools"`
	// Conditions hold ConditionReady.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// L4ClusterList is a list of L4Clusters.
type L4ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []L4Cluster `json:"items"`
}
