package main

import (
	"log/slog"

	"github.com/tlbproject/tlb/l7/kube"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
)

// newKubeSource builds the L7 controller's Kubernetes source.
func newKubeSource(kubeconfig string, inCluster bool, log *slog.Logger, opts kube.Options) (*kube.Source, error) {
	c, err := tlbkube.NewClients(kubeconfig, inCluster, "tlb-l7")
	if err != nil {
		return nil, err
	}
	return kube.NewSource(c.Kube, log.With("source", "kubernetes"), opts)
}
