// Package controller runs the IPAM controller: it watches Services of type
// LoadBalancer that ask for TLB (spec.loadBalancerClass tlb.io/l4, or the
// annotation tlb.io/enabled: "true"), VIPPools and L4Clusters; it hands
// Services a VIP from the allocator in package ipam and writes it to
// status.loadBalancer.ingress, with the annotations naming the pool and L4
// cluster, in one write to the status subresource; and it writes the
// used/free counts and the Ready condition of pools and clusters to their
// status (statusplan.go plans it; nothing is written when it is
// unchanged). A Service gets one VIP per family its spec.ipFamilies and
// spec.ipFamilyPolicy ask for, from pools of one L4 cluster.
//
// It follows the sample-controller pattern (informers, a typed rate-limited
// workqueue of keys, DeepCopy before writing, Forget on success and
// AddRateLimited on error) and writes only when something changed. On start
// it rebuilds every allocation from what the API server recorded, never from
// memory, and it never hands out an address that any Service's status
// holds. It keeps no finalizer on Services (it removes the one earlier
// versions added): a deleted Service's VIP is free once the Service is
// gone. It owns the status and the tlb.io/assigned-* annotations of TLB's
// Services; it must not touch Services of another class, or the spec of
// any object.
package controller
