// Package kube builds a gateway node's netd model (netd/model.Gateway)
// from the Kubernetes API: the VIPs of the L4 clusters that this node's
// gateway group serves. It is the Kubernetes counterpart of the file
// source in netd/config; both feed the same model.
//
// The rule (shared with the director source, tlb/kube): a Node and an
// L4Cluster each carry an optional label tlb.io/gateway-group; a gateway
// node (label tlb.io/gateway=true) serves every VIP, in the status of a
// TLB Service, that the ipam controller assigned (annotation
// tlb.io/assigned-l4-cluster) to an L4 cluster of the node's group and
// that lies in one of that cluster's VIPPools. No label means the default
// group "". A node without the gateway label serves no VIP.
//
// The pure core is BuildGateway; Source wraps it in informers and a
// single-key workqueue and hands each changed model to a callback. While
// the API server is unreachable it emits nothing, so the last VIPs stay
// bound.
//
// It only reads from the API server (its own Node; Services, VIPPools,
// L4Clusters: get, list, watch). It must not write to the API server or
// touch the kernel; netd's reconciler applies the model.
package kube
