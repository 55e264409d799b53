// Package v1alpha1 holds TLB's own Gateway API extension types, API group
// tlb.io/v1alpha1:
//
//   - GatewayClassConfig (cluster-scoped), the target of a GatewayClass's
//     spec.parametersRef: the environment and pool a Gateway's VIP comes
//     from and the L7 gateway group that serves it;
//   - TrafficPolicy (namespaced), a policy attached by targetRefs to a
//     Gateway, HTTPRoute or GRPCRoute that carries the DSL's gateway
//     functions (interceptors, JWT/RBAC, rate limits, CORS).
//
// The types are hand-written with hand-written deep copies; their CRDs are
// under deploy/crds.
package v1alpha1
