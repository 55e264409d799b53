package kube

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/gatewaywatch"
)

// GatewayAPIBuild turns Gateway API objects into the model:
// gatewayapi.Build, or a stand-in in tests.
type GatewayAPIBuild func(gatewayapi.Inputs) gatewayapi.Result

// GatewayAPI lets a Source read Gateway API objects (Gateways, routes of
// TLB's GatewayClasses, ReferenceGrants) and tlb.io/v1alpha1
// GatewayClassConfigs and TrafficPolicies, and merge what Build makes of
// them for the Source's group into the model. The kinds whose CRDs the
// API server serves are watched. Without the GatewayClass and Gateway
// CRDs the Source serves annotated Services only (logged once) and asks
// again every Rediscover, so that CRDs installed later are read without a
// restart; kinds added after the Gateway API is found need one.
type GatewayAPI struct {
	Client  gwclient.Interface
	Dynamic dynamic.Interface
	Build   GatewayAPIBuild
	// Rediscover is how often discovery is asked again while the CRDs
	// are not installed (default DefaultGatewayAPIRediscover).
	Rediscover time.Duration
}

// DefaultGatewayAPIRediscover is GatewayAPI.Rediscover's default.
const DefaultGatewayAPIRediscover = 30 * time.Second

// gatewayAPIVersion is the group/version of the kinds read.
var gatewayAPIVersion = gatewayv1.GroupVersion.String()

// gatewayAPIWatch is the informers of the Gateway API kinds served and
// what Build makes of them.
type gatewayAPIWatch struct {
	build GatewayAPIBuild
	// kinds is kindsKey of the kinds watched.
	kinds string
	watch *gatewaywatch.Watch
}

// served returns the resource names the API server serves in a
// group/version; none (and no error) when it serves no such version.
func served(d discovery.DiscoveryInterface, groupVersion string) (map[string]bool, error) {
	l, err := d.ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discover the resources of %s: %w", groupVersion, err)
	}
	out := map[string]bool{}
	for _, r := range l.APIResources {
		out[r.Name] = true
	}
	return out, nil
}

// discoverGatewayAPI asks the API server which kinds it serves, retrying
// until it answers or ctx ends; nil resources mean ctx ended.
func discoverGatewayAPI(ctx context.Context, d discovery.DiscoveryInterface, log *slog.Logger) (gw, tlb map[string]bool) {
	_ = wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(context.Context) (bool, error) {
		var err error
		if gw, err = served(d, gatewayAPIVersion); err == nil {
			tlb, err = served(d, tlbv1alpha1.SchemeGroupVersion.String())
		}
		if err != nil {
			log.Warn("Gateway API discovery failed; retrying", "err", err)
			return false, nil
		}
		return true, nil
	})
	return gw, tlb
}

// watchGatewayAPI runs beside the Source's loop, which counts ready as
// one of its informers: until ready, the loop publishes nothing and says
// every few seconds that it still waits (as when the API server cannot be
// reached). It discovers the Gateway API kinds served, starts informers
// on them, and once they have synced hands them to build and sets ready;
// without the CRDs it sets ready at once. It then asks discovery again
// every Rediscover: when the kinds served change (CRDs installed, some
// after others, or removed) it watches the new set, and hands it over
// once synced.
func (s *Source) watchGatewayAPI(ctx context.Context, ready *atomic.Bool) {
	every := s.opts.GatewayAPI.Rediscover
	if every <= 0 {
		every = DefaultGatewayAPIRediscover
	}
	for first := true; ; first = false {
		w := s.newGatewayAPIWatch(ctx, first)
		switch {
		case ctx.Err() != nil:
			return
		case w != nil:
			if !s.runGatewayAPIWatch(ctx, w, every, ready) {
				return
			}
		default: // not installed: serve without, and look again
			s.gatewayAPI.Store(nil)
			ready.Store(true)
			s.queue.Add(sharedkube.ModelKey)
			if !s.waitKindsChange(ctx, "", every) {
				return
			}
		}
	}
}

// runGatewayAPIWatch starts w's informers and hands w over once they
// have synced. It stops them when the kinds served change (true: watch
// the new set) or ctx ends (false).
func (s *Source) runGatewayAPIWatch(ctx context.Context, w *gatewayAPIWatch, every time.Duration, ready *atomic.Bool) bool {
	wctx, cancel := context.WithCancel(ctx)
	changed := make(chan bool, 1)
	go func() {
		changed <- s.waitKindsChange(wctx, w.kinds, every)
		cancel()
	}()
	w.watch.Start(wctx.Done())
	if cache.WaitForCacheSync(wctx.Done(), w.watch.Synced()...) {
		s.gatewayAPI.Store(w)
		ready.Store(true)
		s.queue.Add(sharedkube.ModelKey)
	}
	<-wctx.Done()
	cancel()
	w.watch.Shutdown()
	return <-changed
}

// waitKindsChange asks discovery every interval until the Gateway API
// kinds served differ from kinds (true) or ctx ends (false).
func (s *Source) waitKindsChange(ctx context.Context, kinds string, every time.Duration) bool {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		gw, tlb := discoverGatewayAPI(ctx, s.client.Discovery(), s.log)
		if gw == nil {
			return false
		}
		if now := kindsKey(gw, tlb); now != kinds {
			s.log.Info("Gateway API kinds served changed; watching them anew", "was", kinds, "now", now)
			return true
		}
	}
}

// kindsKey names the set of Gateway API and tlb.io kinds served; empty
// when the Gateway API is off (no GatewayClass or Gateway CRD).
func kindsKey(gw, tlb map[string]bool) string {
	if !gw["gatewayclasses"] || !gw["gateways"] {
		return ""
	}
	return strings.Join(slices.Sorted(maps.Keys(gw)), ",") + ";" + strings.Join(slices.Sorted(maps.Keys(tlb)), ",")
}

// newGatewayAPIWatch discovers the Gateway API kinds and makes informers
// on those served (not started); nil when the CRDs are not installed
// (said in the log when first is set) or ctx ended.
func (s *Source) newGatewayAPIWatch(ctx context.Context, first bool) *gatewayAPIWatch {
	ga := s.opts.GatewayAPI
	gw, tlb := discoverGatewayAPI(ctx, s.client.Discovery(), s.log)
	if gw == nil {
		return nil
	}
	if !gw["gatewayclasses"] || !gw["gateways"] {
		if first {
			s.log.Info("Gateway API CRDs not installed; serving annotated Services only until they are", "groupVersion", gatewayAPIVersion)
		}
		return nil
	}
	w, err := gatewaywatch.New(gatewaywatch.Options{Gateway: ga.Client, Kube: s.client, Dynamic: ga.Dynamic,
		Namespaces: s.opts.Namespaces, Served: gatewaywatch.Served{Gateway: gw, TLB: tlb},
		// ConfigMaps (CA bundles) only where Secrets are read: RBAC
		// grants both per served namespace (tlb-l7-secrets).
		CABundles: s.opts.StandIn == nil,
		Handler:   sharedkube.QueueHandler(s.queue, s.log)})
	if err != nil {
		s.log.Warn("Gateway API informers could not be watched; serving annotated Services only", "err", err)
		return nil
	}
	s.log.Info("reading Gateway API objects", "groupVersion", gatewayAPIVersion, "kinds", slices.Sorted(maps.Keys(gw)))
	return &gatewayAPIWatch{build: ga.Build, kinds: kindsKey(gw, tlb), watch: w}
}

// inputs lists the Gateway API caches into Build's inputs, completed with
// the core objects the Source already lists.
func (w *gatewayAPIWatch) inputs(services []*corev1.Service, core gatewayapi.Inputs) (gatewayapi.Inputs, error) {
	core.Services = services
	in, err := w.watch.Inputs(core)
	if err != nil {
		return gatewayapi.Inputs{}, fmt.Errorf("list Gateway API objects: %w", err)
	}
	in.Addresses = gatewaywatch.VIPAddresses(services, nil)
	return in, nil
}

// namespaces returns the namespaces watched, NamespaceAll for every one.
func (s *Source) namespaces() []string {
	if len(s.opts.Namespaces) == 0 {
		return []string{metav1.NamespaceAll}
	}
	return s.opts.Namespaces
}
