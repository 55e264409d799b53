package v1alpha1

// ConditionReady is the condition type of VIPPool and L4Cluster status:
// True while the ipam controller allocates VIPs from the pool (to the
// cluster) as its spec says; False with one of the Reason* reasons and a
// message naming the field to fix.
const ConditionReady = "Ready"

// Reasons of ConditionReady.
const (
	// ReasonAllocating: the ipam controller allocates from the pool (to
	// the cluster) as its current spec says.
	ReasonAllocating = "Allocating"
	// ReasonInvalid: this object makes the set of VIPPools and
	// L4Clusters invalid (overlapping CIDRs, a pool naming a missing
	// cluster, ...); the message names the field.
	ReasonInvalid = "Invalid"
	// ReasonNotLoaded: another object makes the set invalid, so this
	// spec is not loaded yet; the message names that object.
	ReasonNotLoaded = "NotLoaded"
	// ReasonNoVIPPool: no VIPPool that the controller allocates from
	// names this L4Cluster, so it gets no VIPs.
	ReasonNoVIPPool = "NoVIPPool"
)
