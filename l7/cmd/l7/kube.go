package main

import (
	"fmt"
	"log/slog"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/kube"
)

// newKubeSource builds the L7 controller's Kubernetes source and returns
// it with its client; with gatewayAPI it also reads Gateway API objects
// (when their CRDs are installed) through gatewayapi.Build.
func newKubeSource(kf *cli.Kube, gatewayAPI bool, log *slog.Logger, opts kube.Options) (*kube.Source, kubernetes.Interface, error) {
	cfg, err := kf.RESTConfig("tlb-l7")
	if err != nil {
		return nil, nil, err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if gatewayAPI {
		gc, err := gwclient.NewForConfig(cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("gateway API client: %w", err)
		}
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("kubernetes dynamic client: %w", err)
		}
		opts.GatewayAPI = &kube.GatewayAPI{Client: gc, Dynamic: dc, Build: gatewayapi.Build}
	}
	src, err := kube.NewSource(kc, log.With("source", "kubernetes"), opts)
	return src, kc, err
}
