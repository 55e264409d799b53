// Package ipam owns the allocation of virtual IP addresses (VIPs) to
// Services: VIP pools (CIDRs), grouped into L4 clusters (a set of directors
// that serves about 1,000 VIPs) and environments (Feature, Dev, LnP, Staging,
// Production, ...), and the scheduler that picks the least loaded L4 cluster
// of an environment for a new VIP.
//
// It is plain code: no Kubernetes client, no clock, no I/O. The controller in
// ipam/controller feeds it the pools and the allocations it reads from the
// API server and writes the results back. The package must not touch the
// kernel, BGP or the API server, and it keeps no package-level state.
package ipam
