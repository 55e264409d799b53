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
