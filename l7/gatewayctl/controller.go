package gatewayctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/l7/gatewaywatch"
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
	// AddressRecheck is how often, at most, the controller looks again
	// while a Gateway waits for a VIP: the IPAM's reason (an Event on the
	// VIP Service) may have changed (default 15s). It looks sooner just
	// after a Gateway starts waiting.
	AddressRecheck time.Duration
}

// Resources of tlb.io/v1alpha1 the controller reads (and whose status
// it writes).
var (
	ClassConfigResource   = gatewaywatch.ClassConfigResource
	TrafficPolicyResource = gatewaywatch.TrafficPolicyResource
)

// The workqueue's two keys; every event adds both. syncKey's sync
// rebuilds everything and writes status; vipKey's writes only the VIP
// Services, on a worker of its own, so that a new Gateway's VIP Service
// is not created only after a long run of status writes (the IPAM
// allocates its VIP meanwhile).
const (
	syncKey = "gateways"
	vipKey  = "vip-services"
)

// Controller reconciles Gateway API objects of our classes. Build it with
// New, run it with Run.
type Controller struct {
	opts    Options
	log     *slog.Logger
	clock   clock.PassiveClock
	metrics *metrics
	own     *ownWrites
	queue   workqueue.TypedRateLimitingInterface[string]
	// recheck paces the looks at the IPAM's warnings (recheck.go).
	recheck *recheck

	recorder record.EventRecorder
	scheme   *runtime.Scheme

	// watch is every object Build reads, cluster-wide.
	watch *gatewaywatch.Watch
}

// New builds a Controller and its informers; nothing runs until Run.
func New(o Options) (*Controller, error) {
	if o.Kube == nil || o.Gateway == nil || o.Dynamic == nil || o.Log == nil {
		return nil, errors.New("gateway controller: Kube, Gateway, Dynamic and Log are required")
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.AddressRecheck <= 0 {
		o.AddressRecheck = 15 * time.Second
	}
	scheme := runtime.NewScheme()
	if err := gatewayv1.Install(scheme); err != nil {
		return nil, fmt.Errorf("register Gateway API types: %w", err)
	}
	c := &Controller{
		opts: o, log: o.Log, clock: o.Clock, metrics: newMetrics(o.Registry), own: newOwnWrites(), scheme: scheme,
		recheck: &recheck{max: o.AddressRecheck},
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	onAny := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.queue.Add(syncKey); c.queue.Add(vipKey) },
		UpdateFunc: func(_, _ any) { c.queue.Add(syncKey); c.queue.Add(vipKey) },
		DeleteFunc: func(any) { c.queue.Add(syncKey); c.queue.Add(vipKey) },
	}
	w, err := gatewaywatch.New(gatewaywatch.Options{Gateway: o.Gateway, Kube: o.Kube, Dynamic: o.Dynamic, Core: true, CABundles: true, Handler: onAny})
	if err != nil {
		return nil, err
	}
	c.watch = w
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

	c.watch.Start(ctx.Done())
	defer c.watch.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), c.watch.Synced()...) {
		return fmt.Errorf("gateway controller: wait for the informer caches: %w", ctx.Err())
	}
	c.log.Info("gateway controller started", "controllerName", "tlb.io/gateway-controller")
	c.queue.Add(vipKey)
	c.queue.Add(syncKey)
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	// One worker per key: the queue never hands out a key that is
	// being processed.
	var workers sync.WaitGroup
	for range 2 {
		workers.Go(func() {
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for c.processNext(ctx) {
				}
			}, time.Second)
		})
	}
	workers.Wait()
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	began := c.clock.Now()
	sync := c.sync
	if key == vipKey {
		sync = c.syncVIPs
	}
	err := sync(ctx)
	// The metrics count the status syncs (the VIP writes have theirs).
	status := key == syncKey
	if status {
		c.metrics.syncSeconds.Observe(c.clock.Since(began).Seconds())
	}
	if err != nil {
		if status {
			c.metrics.syncs.WithLabelValues("error").Inc()
		}
		c.log.Warn("sync Gateway API objects failed; retrying", "key", key, "err", err)
		c.queue.AddRateLimited(key)
		return true
	}
	if status {
		c.metrics.syncs.WithLabelValues("ok").Inc()
	}
	c.queue.Forget(key)
	return true
}
