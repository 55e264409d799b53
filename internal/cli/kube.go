package cli

import (
	"flag"

	"k8s.io/client-go/rest"

	sharedkube "github.com/tlbproject/tlb/internal/kube"
)

// Kube are the flags that say how a binary reaches the API server.
type Kube struct {
	// Kubeconfig is the file of --kubeconfig ("" with InCluster).
	Kubeconfig string
	// InCluster is --in-cluster: the pod's service account.
	InCluster bool
	// QPS and Burst are the client-side rate limit.
	QPS   float64
	Burst int
}

// KubeDefaults are a binary's defaults of the Kubernetes flags.
type KubeDefaults struct {
	// QPS and Burst: client-go's 5 and 10 for the readers, more for a
	// controller that writes per object.
	QPS   float64
	Burst int
}

// ClientGoDefaults are client-go's own rate limits, which the binaries
// that only watch keep.
var ClientGoDefaults = KubeDefaults{QPS: 5, Burst: 10}

// RegisterKube adds --kubeconfig, --in-cluster, --kube-api-qps and
// --kube-api-burst to fs.
func RegisterKube(fs *flag.FlagSet, d KubeDefaults) *Kube {
	k := &Kube{}
	fs.StringVar(&k.Kubeconfig, "kubeconfig", "", "reach the Kubernetes API server through this kubeconfig file")
	fs.BoolVar(&k.InCluster, "in-cluster", false, "reach the Kubernetes API server with the pod's service account")
	fs.Float64Var(&k.QPS, "kube-api-qps", d.QPS, "API server requests per second (client-side limit)")
	fs.IntVar(&k.Burst, "kube-api-burst", d.Burst, "API server requests allowed at once above --kube-api-qps")
	return k
}

// Enabled reports whether either --kubeconfig or --in-cluster was given
// (for the binaries that can also run from a file alone).
func (k *Kube) Enabled() bool { return k.Kubeconfig != "" || k.InCluster }

// RESTConfig is the client configuration of the flags, by the one rule of
// internal/kube.RESTConfig (the pod's service account when --in-cluster is
// set or no kubeconfig is named), with the flags' rate limit; userAgent
// names the binary in the API server's logs and audit.
func (k *Kube) RESTConfig(userAgent string) (*rest.Config, error) {
	cfg, err := sharedkube.RESTConfig(k.Kubeconfig, k.InCluster, userAgent)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = float32(k.QPS), k.Burst
	return cfg, nil
}

// Clients are the typed and dynamic clients of RESTConfig.
func (k *Kube) Clients(userAgent string) (sharedkube.Clients, error) {
	cfg, err := k.RESTConfig(userAgent)
	if err != nil {
		return sharedkube.Clients{}, err
	}
	return sharedkube.ClientsFor(cfg)
}
