package kube

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients are what TLB's Kubernetes sources read the API server with.
type Clients struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
}

// NewClients builds clients from a kubeconfig file, or from the pod's
// service account when inCluster is set; userAgent names the binary in the
// API server's logs and audit.
func NewClients(kubeconfig string, inCluster bool, userAgent string) (Clients, error) {
	var cfg *rest.Config
	var err error
	if inCluster {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if err != nil {
		return Clients{}, fmt.Errorf("kubernetes client config: %w", err)
	}
	cfg.UserAgent = userAgent
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("kubernetes client: %w", err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	return Clients{Kube: kc, Dynamic: dc}, nil
}
