package main

import (
	"fmt"
	"log/slog"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/kube"
)

// newKubeSource builds the L7 controller's Kubernetes source and returns
// it with its client; with gatewayAPI it also reads Gateway API objects
// (when their CRDs are installed) through gatewayapi.Build.
func newKubeSource(kubeconfig string, inCluster, gatewayAPI bool, log *slog.Logger, opts kube.Options) (*kube.Source, kubernetes.Interface, error) {
	var cfg *rest.Config
	var err error
	if inCluster {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	cfg.UserAgent = "tlb-l7"
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
