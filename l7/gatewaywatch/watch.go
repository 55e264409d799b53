package gatewaywatch

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// Options say what a Watch watches and whom it tells.
type Options struct {
	// Gateway reads the Gateway API kinds; Kube the Namespaces (and with
	// Core the Services, EndpointSlices and Secrets); Dynamic, when set,
	// the tlb.io/v1alpha1 kinds.
	Gateway gwclient.Interface
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Namespaces are the namespaces of the namespaced kinds; none is
	// every namespace.
	Namespaces []string
	// Served are the kinds the API server serves; nil maps mean every
	// kind.
	Served Served
	// Core also watches Services, EndpointSlices and Secrets in every
	// namespace (a caller that has its own leaves it off).
	Core bool
	// CABundles also watches the ConfigMaps of the namespaces: the CA
	// bundles of client certificate validation and of
	// BackendTLSPolicies (a caller that reads no Secrets, l7 serve
	// --keyless, leaves it off: it may read neither).
	CABundles bool
	// Handler is told of every change of every object watched.
	Handler cache.ResourceEventHandler
}

// Served are the resource names (plural, lower case) the API server
// serves in gateway.networking.k8s.io/v1 (Gateway) and tlb.io/v1alpha1
// (TLB), as discovery reports them.
type Served struct {
	Gateway, TLB map[string]bool
}

// gateway reports whether resource is served (or every kind is).
func (s Served) gateway(resource string) bool { return s.Gateway == nil || s.Gateway[resource] }

// tlb reports whether resource is served (or every kind is).
func (s Served) tlb(resource string) bool { return s.TLB == nil || s.TLB[resource] }

// Watch is the informers of one set of kinds; each lister appends its
// objects to the Inputs. Start it, wait for Synced, read Inputs, and
// Shutdown when done.
type Watch struct {
	handler   cache.ResourceEventHandler
	lists     []func(*gatewayapi.Inputs) error
	factories []factory
	synced    []cache.InformerSynced
	errs      []error
}

// factory is an informer factory: started once, shut down at the end.
type factory interface {
	Start(stop <-chan struct{})
	Shutdown()
}

// New makes the informers (not started) of the kinds o asks for.
func New(o Options) (*Watch, error) {
	w := &Watch{handler: o.Handler}
	namespaces := o.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	w.watchCluster(o)
	for _, ns := range namespaces {
		w.watchNamespace(o, ns)
	}
	if len(w.errs) > 0 {
		return nil, fmt.Errorf("watch Gateway API objects: %w", w.errs[0])
	}
	return w, nil
}

// watch adds inf, told to the handler, and how to list it as what.
func (w *Watch) watch(inf cache.SharedIndexInformer, what string, list func(*gatewayapi.Inputs) error) {
	if w.handler != nil {
		if _, err := inf.AddEventHandler(w.handler); err != nil {
			w.errs = append(w.errs, fmt.Errorf("%s: %w", what, err))
			return
		}
	}
	w.synced = append(w.synced, inf.HasSynced)
	w.lists = append(w.lists, func(in *gatewayapi.Inputs) error {
		if err := list(in); err != nil {
			return fmt.Errorf("list %s from cache: %w", what, err)
		}
		return nil
	})
}

// Start starts the informers; they stop when stop closes or on Shutdown.
func (w *Watch) Start(stop <-chan struct{}) {
	for _, f := range w.factories {
		f.Start(stop)
	}
}

// Synced reports whether every informer has synced.
func (w *Watch) Synced() []cache.InformerSynced { return w.synced }

// Shutdown waits for the informers to stop (after stop closed).
func (w *Watch) Shutdown() {
	for _, f := range w.factories {
		f.Shutdown()
	}
}

// Inputs lists every cache into base, which holds what the caller reads
// itself. The objects belong to the caches: read only.
func (w *Watch) Inputs(base gatewayapi.Inputs) (gatewayapi.Inputs, error) {
	in := base
	for _, list := range w.lists {
		if err := list(&in); err != nil {
			return gatewayapi.Inputs{}, err
		}
	}
	return in, nil
}
