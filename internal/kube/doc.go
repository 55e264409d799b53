// Package kube is the Kubernetes plumbing every TLB role shares: the
// clients (one rule for kubeconfig versus in-cluster), the informer caches
// of the L4 objects (Services, Nodes, VIPPools, L4Clusters), the
// QueueHandler and the generic ModelLoop that rebuilds a whole model on
// each change and emits it only when it differs, the per-object errors a
// build reports (ObjectError, ObjectErrorLog), and the readings of the
// user-facing contract (package api) that several roles make: which
// Services TLB serves and which VIPs they hold, which nodes are gateways
// and of which group, which Services reach the L7 listeners.
//
// It belongs to no role: the director's source (tlb/kube), netd's
// (netd/kube) and L7's (l7/kube) build on it, and it must import none of
// them. It only reads from the API server; writing, the kernel and BGP are
// the callers' business.
package kube
