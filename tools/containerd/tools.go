//go:build tools

// Package tools pins containerd so that tools/containerd/build.sh can build
// the container runtime of the lab VM's Kubernetes nodes (containerd, its
// runc shim and ctr) from the module proxy. Nothing here is linked into TLB.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
