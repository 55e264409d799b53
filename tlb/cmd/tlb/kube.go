package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/tlb/kube"
	"github.com/tlbproject/tlb/tlb/model"
)

// kubeFlags say where the director's services come from when they come
// from Kubernetes rather than from the file's services: list.
type kubeFlags struct {
	*cli.Kube
	l4Cluster string // the L4Cluster this director serves
	namespace string // the directors' namespace, where BGPPeers' password Secrets are
}

// desiredSource emits every new desired model until ctx ends.
type desiredSource interface {
	Run(ctx context.Context, emit func(model.Desired)) error
}

// newKubeSource builds the director's Kubernetes source.
func newKubeSource(k kubeFlags, log *slog.Logger) (desiredSource, error) {
	if k.l4Cluster == "" {
		return nil, fmt.Errorf("--l4-cluster is required with --kubeconfig or --in-cluster")
	}
	c, err := k.Clients("tlb-director")
	if err != nil {
		return nil, err
	}
	return kube.NewSource(c.Kube, c.Dynamic, k.l4Cluster, log.With("source", "kubernetes"))
}
