// Package controller runs the IPAM controller: it watches Services of type
// LoadBalancer that ask for TLB (spec.loadBalancerClass tlb.io/l4, or the
// annotation tlb.io/enabled: "true"), VIPPools and L4Clusters; it hands
// Services a VIP from the allocator in package ipam, writes it to
// status.loadBalancer.ingress with annotations naming the pool and L4
// cluster, releases it through a finalizer on deletion, and writes the
// used/free counts of pools and clusters to their status.
//
// It follows the sample-controller pattern (informers, a typed rate-limited
// workqueue of keys, DeepCopy before writing, Forget on success and
// AddRateLimited on error) and writes only when something changed. On start
// it rebuilds every allocation from what the API server recorded, never from
// memory. It owns the status of those Services and the finalizer
// tlb.io/vip-release; it must not touch Services of another class, their
// status, or the spec of any object.
package controller
