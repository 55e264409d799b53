package api

// The Service API of TLB: the load balancer class, the annotations a Service
// sets to choose its VIP, and the annotations the controller writes back.
// docs/kubernetes.md documents each one.
const (
	// LoadBalancerClass is the spec.loadBalancerClass of Services TLB serves.
	LoadBalancerClass = "tlb.io/l4"
	// AnnotationEnabled ("true") opts a LoadBalancer Service without a
	// loadBalancerClass into TLB.
	AnnotationEnabled = "tlb.io/enabled"
	// AnnotationEnvironment names the environment whose L4 clusters may
	// serve the VIP.
	AnnotationEnvironment = "tlb.io/environment"
	// AnnotationPool names the VIPPool to take the VIP from.
	AnnotationPool = "tlb.io/pool"
	// AnnotationVIP asks for specific addresses: one, or one per family
	// separated by a comma ("203.0.113.10,2001:db8::10"), each of a family
	// of the Service's spec.ipFamilies.
	AnnotationVIP = "tlb.io/vip"
	// AnnotationL7 ("true") exposes the Service through the L7 gateway tier.
	AnnotationL7 = "tlb.io/l7"
	// AnnotationGatewayGroup names the L7 gateway group whose nodes serve
	// the VIP of a Gateway API Gateway (set by the Gateway controller on
	// the Gateway's VIP Service); the group must belong to the Service's
	// environment.
	AnnotationGatewayGroup = "tlb.io/gateway-group"
	// LabelOwningGateway ("namespace.name") marks the VIP Service the
	// Gateway controller made for a Gateway API Gateway.
	LabelOwningGateway = "tlb.io/owning-gateway"
	// AnnotationAssignedPool is written by the controller: the pool of the VIP.
	AnnotationAssignedPool = "tlb.io/assigned-pool"
	// AnnotationAssignedL4Cluster is written by the controller: the L4
	// cluster that serves the VIP.
	AnnotationAssignedL4Cluster = "tlb.io/assigned-l4-cluster"
)
