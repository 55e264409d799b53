// Package k8sagents proves the director's and netd's Kubernetes sources
// (tlb/kube, netd/kube) against a real kube-apiserver and etcd: the models
// they build from VIPPools, L4Clusters, gateway Nodes and Services (VIPs
// allocated by the real ipam controller, run in-process) equal the models
// the file mode builds from the equivalent YAML (testdata/), they follow
// changes, and they emit nothing while the API server is unreachable.
//
// The tests carry the build tag k8s and need the binaries that
// tools/k8s-test.sh provides (TLB_KUBE_APISERVER, etcd). They own only the
// API server they start and the loopback proxy in front of it.
package k8sagents
