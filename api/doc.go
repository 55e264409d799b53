// Package api is TLB's user-facing contract outside the custom resources
// (those are in api/v1alpha1): the load balancer class, the Service
// annotations users set and the ones the controllers write back, the node
// labels operators set, and the JSON that components serve to the console
// and to operators. Every role reads these names from here, so a role
// never imports another role to learn them. docs/kubernetes.md and
// docs/l7.md document each one.
//
// The package holds names and wire types only: no logic, no I/O.
package api
