package k8snode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Binaries are the programs a node and its control plane run.
type Binaries struct {
	Kubelet, ControllerManager, Scheduler string
	Containerd, Ctr                       string
	// ShimDir holds containerd-shim-runc-v2 (put on containerd's PATH).
	ShimDir string
	Runc    string
	// CNIDir holds the CNI plugins (bridge, host-local, loopback).
	CNIDir string
}

// BinariesFromEnv finds the binaries tools/lab-test.sh built and installed:
// the Kubernetes binaries beside TLB_KUBE_APISERVER
// (tools/kubernetes/build.sh), containerd in TLB_CONTAINERD_DIR
// (tools/containerd/build.sh), runc and the CNI plugins from Debian.
func BinariesFromEnv() (Binaries, error) {
	apiserver := os.Getenv("TLB_KUBE_APISERVER")
	ctrd := os.Getenv("TLB_CONTAINERD_DIR")
	if apiserver == "" || ctrd == "" {
		return Binaries{}, errors.New("TLB_KUBE_APISERVER and TLB_CONTAINERD_DIR must be set: run through tools/lab-test.sh, which builds them")
	}
	k8s := filepath.Dir(apiserver)
	b := Binaries{
		Kubelet:           filepath.Join(k8s, "kubelet"),
		ControllerManager: filepath.Join(k8s, "kube-controller-manager"),
		Scheduler:         filepath.Join(k8s, "kube-scheduler"),
		Containerd:        filepath.Join(ctrd, "containerd"),
		Ctr:               filepath.Join(ctrd, "ctr"),
		ShimDir:           ctrd,
		CNIDir:            "/usr/lib/cni",
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		return Binaries{}, fmt.Errorf("find runc (Debian package runc, installed by tools/deps.sh): %w", err)
	}
	b.Runc = runc
	for _, f := range []string{b.Kubelet, b.ControllerManager, b.Scheduler, b.Containerd, b.Ctr,
		filepath.Join(b.ShimDir, "containerd-shim-runc-v2"), filepath.Join(b.CNIDir, "bridge"),
		filepath.Join(b.CNIDir, "host-local"), filepath.Join(b.CNIDir, "loopback")} {
		if _, err := os.Stat(f); err != nil {
			return Binaries{}, fmt.Errorf("find %s: %w (tools/lab-test.sh builds the Kubernetes and containerd binaries; the CNI plugins are Debian's containernetworking-plugins)", f, err)
		}
	}
	return b, nil
}
