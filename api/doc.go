// Package api is TLB's user-facing contract outside the custom resources
// (those are in api/v1alpha1): the load balancer class, the Service
// annotations users set and the ones the controllers write back, the node
// labels operators set, the JSON that components serve to the console
// and to operators, and the schema of the L7 gateway functions (policy*.go:
// one type per function, shared by the DSL, the annotations' JSON and
// TrafficPolicy; l7/policy converts each to the model). Every role reads
// these names from here, so a role never imports another role to learn
// them. docs/kubernetes.md and docs/l7.md document each one.
//
// The package holds names and wire types only (with their JSON decoding
// and deep copies): no logic, no I/O.
package api
