package main

import (
	"context"
	"fmt"
	"log/slog"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tlbproject/tlb/tlb/kube"
	"github.com/tlbproject/tlb/tlb/model"
)

// kubeFlags say where the director's services come from when they come
// from Kubernetes rather than from the file's services: list.
type kubeFlags struct {
	kubeconfig string // path, or "" with inCluster
	inCluster  bool
	l4Cluster  string // the L4Cluster this director serves
}

func (k kubeFlags) enabled() bool { return k.kubeconfig != "" || k.inCluster }

// desiredSource emits every new desired model until ctx ends.
type desiredSource interface {
	Run(ctx context.Context, emit func(model.Desired)) error
}

// newKubeSource builds the director's Kubernetes source.
func newKubeSource(k kubeFlags, log *slog.Logger) (desiredSource, error) {
	if k.l4Cluster == "" {
		return nil, fmt.Errorf("--l4-cluster is required with --kubeconfig or --in-cluster")
	}
	var cfg *rest.Config
	var err error
	if k.inCluster {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", k.kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	cfg.UserAgent = "tlb-director"
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	return kube.NewSource(kc, dc, k.l4Cluster, log.With("source", "kubernetes"))
}
