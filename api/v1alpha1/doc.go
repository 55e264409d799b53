// Package v1alpha1 holds the Go types of every tlb.io/v1alpha1 custom
// resource, with hand-written deep copies:
//
//   - VIPPool and L4Cluster (cluster-scoped), the IPAM's pools of VIPs and
//     the L4 clusters that serve them;
//   - GatewayClassConfig (cluster-scoped), the target of a GatewayClass's
//     spec.parametersRef: the environment and pool a Gateway's VIP comes
//     from and the L7 gateway group that serves it;
//   - TrafficPolicy (namespaced), a policy attached by targetRefs to a
//     Gateway, HTTPRoute or GRPCRoute that carries the DSL's gateway
//     functions (interceptors, JWT/RBAC, rate limits, CORS), whose
//     schema is package api's.
//
// Their schemas live in deploy/crds/; the two must agree. The package owns
// only the types; it must not talk to the API server.
package v1alpha1
