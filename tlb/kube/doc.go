// Package kube builds the director's L4 model (tlb/model.Desired) from the
// Kubernetes API: the Services whose VIP the ipam controller assigned to
// this director's L4 cluster, the gateway nodes that serve that cluster,
// and the VIPPools of the cluster. It is the Kubernetes counterpart of the
// file source in tlb/config; both feed the same model.
//
// The pure core is BuildDesired (API objects in, model out). Source wraps
// it in informers and a single-key workqueue and hands each changed model
// to a callback; while the API server is unreachable it emits nothing, so
// the last model stays programmed. The plumbing of that loop (Caches,
// QueueHandler, ModelLoop, ObjectErrorLog) and the readings of Services
// and Nodes it shares with netd and L7 live in internal/kube; this
// package holds only what is the director's own.
//
// The director's Source also watches EndpointSlices: an L7 Service's ready
// endpoints decide whether its VIP is up for GTM (model.L7Service); netd's
// source does not, and its role may not list them.
//
// It only reads from the API server (Services, Nodes, VIPPools,
// L4Clusters: get, list, watch; EndpointSlices: list, watch). It must not write to the API server, and
// must not touch the kernel or BGP; the caller applies the model.
//
// Which gateway nodes serve which L4 cluster: a Node and an L4Cluster each
// carry an optional label tlb.io/gateway-group (api.LabelGatewayGroup). A
// gateway node (label tlb.io/gateway=true) serves the L4 clusters of its
// group; a missing label is the default group "", so without any group
// labels every gateway node serves every L4 cluster.
package kube
