package api

// Node and L4Cluster labels read by the director and netd sources.
const (
	// LabelGateway ("true") marks a node as a gateway: a real server of
	// the directors, where netd binds VIPs.
	LabelGateway = "tlb.io/gateway"
	// LabelGatewayGroup on a Node names the gateway group it belongs to;
	// on an L4Cluster it names the gateway group that serves the cluster's
	// VIPs. Absent means the default group "".
	LabelGatewayGroup = "tlb.io/gateway-group"
)

// Node labels and annotations that take a gateway node out of service.
const (
	// LabelExcludeFromExternalLoadBalancers, present with any value, keeps
	// a node out of every external load balancer (the Kubernetes
	// well-known label, honoured by MetalLB and Cilium too): a gateway
	// node carrying it gets weight 0, no new flows.
	LabelExcludeFromExternalLoadBalancers = "node.kubernetes.io/exclude-from-external-load-balancers"
	// AnnotationDrain on a gateway node drains it: weight 0 at once (its
	// established flows keep going), then the real server is removed once
	// no connection to it is active or the director's drain timeout has
	// passed. The value is "true" (the timeout counts from when each
	// director first saw the annotation) or an RFC 3339 time, when the
	// drain began (what `tlb drain NODE` writes). Removing the annotation
	// puts the node back.
	AnnotationDrain = "tlb.io/drain"
)
