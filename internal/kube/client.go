package kube

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig is the one rule by which every TLB binary reaches the API
// server: the kubeconfig file when one is named and inCluster is not set,
// otherwise the pod's service account. userAgent names the binary in the
// API server's logs and audit.
func RESTConfig(kubeconfig string, inCluster bool, userAgent string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if inCluster || kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	cfg.UserAgent = userAgent
	return cfg, nil
}

// Clients are what TLB's Kubernetes sources read the API server with.
type Clients struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
}

// NewClients builds clients from a kubeconfig file, or from the pod's
// service account (the rule of RESTConfig); userAgent names the binary in
// the API server's logs and audit.
func NewClients(kubeconfig string, inCluster bool, userAgent string) (Clients, error) {
	cfg, err := RESTConfig(kubeconfig, inCluster, userAgent)
	if err != nil {
		return Clients{}, err
	}
	return ClientsFor(cfg)
}

// ClientsFor builds the typed and the dynamic client of cfg.
func ClientsFor(cfg *rest.Config) (Clients, error) {
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
