//go:build tools

// Package tools pins k8s.io/kubernetes so that tools/kubernetes/build.sh can
// build the control plane and node binaries the tests run (kube-apiserver for
// the API-server tests; kube-controller-manager, kube-scheduler and kubelet
// for the node in the lab VM; kubectl for the test of
// deploy/crds/gateway-api/install.sh, built by tools/k8s-test.sh) from the
// module proxy. Nothing here is linked into TLB.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
