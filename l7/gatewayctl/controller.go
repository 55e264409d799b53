package gatewayctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
)

// Options configure a Controller.
type Options struct {
	// Kube reads core objects and writes VIP Services and Events.
	Kube kubernetes.Interface
	// Gateway reads Gateway API objects and writes their status.
	Gateway gwclient.Interface
	// Dynamic reads GatewayClassConfigs and TrafficPolicies and writes
	// the TrafficPolicies' status.
	Dynamic dynamic.Interface
	// Log receives structured logs.
	Log *slog.Logger
	// Registry receives the controller's metrics; nil registers none.
	Registry prometheus.Registerer
	// Clock stamps condition transitions (default: the real clock).
	Clock clock.PassiveClock
	// Identity names this replica in Events.
	Identity string
}

// Resources of tlb.io/v1alpha1 the controller reads.
var (
	ClassConfigResource   = tlbv1alpha1.SchemeGroupVersion.WithResource(tlbv1alpha1.ResourceGatewayClassConfigs)
	TrafficPolicyResource = tlbv1alpha1.SchemeGroupVersion.WithResource(tlbv1alpha1.ResourceTrafficPolicies)
)

// syncKey is the one workqueue key: every event rebuilds everything.
const syncKey = "gateways"

// Controller reconciles Gateway API objects of our classes. Build it with
// New, run it with Run.
type Controller struct {
	opts    Options
	log     *slog.Logger
	clock   clock.PassiveClock
	metrics *metrics
	own     *ownWrites
	queue   workqueue.TypedRateLimitingInterface[string]

	recorder record.EventRecorder
	scheme   *runtime.Scheme

	gwInformers   gwinformers.SharedInformerFactory
	kubeInformers informers.SharedInformerFactory
	dynInformers  dynamicinformer.DynamicSharedInformerFactory
	synced        []cache.InformerSynced
	listers       listers
}

// New builds a Controller and its informers; nothing runs until Run.
func New(o Options) (*Controller, error) {
	if o.Kube == nil || o.Gateway == nil || o.Dynamic == nil || o.Log == nil {
		return nil, errors.New("gateway controller: Kube, Gateway, Dynamic and Log are required")
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	scheme := runtime.NewScheme()
	if err := gatewayv1.Install(scheme); err != nil {
		return nil, fmt.Errorf("register Gateway API types: %w", err)
	}
	c := &Controller{
		opts: o, log: o.Log, clock: o.Clock, metrics: newMetrics(o.Registry), own: newOwnWrites(), scheme: scheme,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	c.gwInformers = gwinformers.NewSharedInformerFactory(o.Gateway, 0)
	c.kubeInformers = informers.NewSharedInformerFactory(o.Kube, 0)
	c.dynInformers = dynamicinformer.NewDynamicSharedInformerFactory(o.Dynamic, 0)
	gw := c.gwInformers.Gateway().V1()
	core := c.kubeInformers.Core().V1()
	c.listers = listers{
		classes:  gw.GatewayClasses().Lister(),
		gateways: gw.Gateways().Lister(),
		http:     gw.HTTPRoutes().Lister(),
		grpc:     gw.GRPCRoutes().Lister(),
		tls:      gw.TLSRoutes().Lister(),
		grants:   gw.ReferenceGrants().Lister(),
		ns:       core.Namespaces().Lister(),
		services: core.Services().Lister(),
		slices:   c.kubeInformers.Discovery().V1().EndpointSlices().Lister(),
		secrets:  core.Secrets().Lister(),
		configs:  c.dynInformers.ForResource(ClassConfigResource).Lister(),
		policies: c.dynInformers.ForResource(TrafficPolicyResource).Lister(),
	}
	onAny := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.queue.Add(syncKey) },
		UpdateFunc: func(_, _ any) { c.queue.Add(syncKey) },
		DeleteFunc: func(any) { c.queue.Add(syncKey) },
	}
	for what, inf := range map[string]cache.SharedIndexInformer{
		"GatewayClasses": gw.GatewayClasses().Informer(), "Gateways": gw.Gateways().Informer(),
		"HTTPRoutes": gw.HTTPRoutes().Informer(), "GRPCRoutes": gw.GRPCRoutes().Informer(),
		"TLSRoutes": gw.TLSRoutes().Informer(), "ReferenceGrants": gw.ReferenceGrants().Informer(),
		"Namespaces": core.Namespaces().Informer(), "Services": core.Services().Informer(),
		"EndpointSlices":      c.kubeInformers.Discovery().V1().EndpointSlices().Informer(),
		"Secrets":             core.Secrets().Informer(),
		"GatewayClassConfigs": c.dynInformers.ForResource(ClassConfigResource).Informer(),
		"TrafficPolicies":     c.dynInformers.ForResource(TrafficPolicyResource).Informer(),
	} {
		if _, err := inf.AddEventHandler(onAny); err != nil {
			return nil, fmt.Errorf("watch %s: %w", what, err)
		}
		c.synced = append(c.synced, inf.HasSynced)
	}
	return c, nil
}

// StatusWrites is how many status updates this controller has written.
func (c *Controller) StatusWrites() int64 { return c.metrics.statusTotal.Load() }

// Run starts the informers, waits for their caches and syncs until ctx
// ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	bc := record.NewBroadcaster(record.WithContext(ctx))
	bc.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.opts.Kube.CoreV1().Events("")})
	defer bc.Shutdown()
	c.recorder = bc.NewRecorder(c.scheme, corev1.EventSource{Component: "tlb-gateway-controller", Host: c.opts.Identity})

	c.gwInformers.Start(ctx.Done())
	c.kubeInformers.Start(ctx.Done())
	c.dynInformers.Start(ctx.Done())
	defer c.gwInformers.Shutdown()
	defer c.kubeInformers.Shutdown()
	defer c.dynInformers.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("gateway controller: wait for the informer caches: %w", ctx.Err())
	}
	c.log.Info("gateway controller started", "controllerName", "tlb.io/gateway-controller")
	c.queue.Add(syncKey)
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		for c.processNext(ctx) {
		}
	}, time.Second)
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	began := c.clock.Now()
	err := c.sync(ctx)
	c.metrics.syncSeconds.Observe(c.clock.Since(began).Seconds())
	if err != nil {
		c.metrics.syncs.WithLabelValues("error").Inc()
		c.log.Warn("sync Gateway API objects failed; retrying", "err", err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.metrics.syncs.WithLabelValues("ok").Inc()
	c.queue.Forget(key)
	return true
}
