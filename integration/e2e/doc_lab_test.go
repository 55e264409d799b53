//go:build lab

// Package e2e_test proves the whole system end to end in the lab VM: a
// real kube-apiserver and etcd run in the VM, the real ipam controller
// allocates a VIP for a Service, the real director (`tlb run
// --kubeconfig`) programs IPVS and announces the pool to a real BIRD, the
// real netd on each gateway binds the VIP on tunl0, and a client reaches
// the Service's VIP through the director and a gateway, with replies going
// straight back (direct server return). Each binary acts with the token of
// its own ServiceAccount and the RBAC of deploy/, nothing more.
//
// It owns only the network namespaces, files and processes it creates.
package e2e_test
