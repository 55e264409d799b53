//go:build tools

// Package tools pins k8s.io/kubernetes so that tools/k8s-test.sh can build
// kube-apiserver from the module proxy. Nothing here is linked into TLB.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
