package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/ipam"
)

// Options configure a Controller.
type Options struct {
	// Client talks to the API server for Services and Events.
	Client kubernetes.Interface
	// Dynamic reads VIPPools and L4Clusters and writes their status.
	Dynamic dynamic.Interface
	// Log receives structured logs.
	Log *slog.Logger
	// Registry receives the controller's metrics; nil registers none.
	Registry prometheus.Registerer
	// DefaultEnvironment serves Services that name no environment, pool or
	// address; empty makes those an error.
	DefaultEnvironment ipam.Environment
	// Workers is how many Services are synced in parallel (default 4).
	Workers int
	// Identity names this replica in Events.
	Identity string
}

// Controller allocates VIPs to Services. Build it with New, run it with Run.
type Controller struct {
	opts     Options
	log      *slog.Logger
	alloc    *ipam.Allocator
	metrics  *metrics
	recorder record.EventRecorder

	kubeInformers informers.SharedInformerFactory
	dynInformers  dynamicinformer.DynamicSharedInformerFactory
	services      corelisters.ServiceLister
	servicesSync  cache.InformerSynced
	pools         cache.GenericLister
	clusters      cache.GenericLister
	crdSync       []cache.InformerSynced

	// queue holds Service keys (namespace/name).
	queue workqueue.TypedRateLimitingInterface[string]
	// poolQueue holds the single keys configKey and statusKey.
	poolQueue workqueue.TypedRateLimitingInterface[string]

	// configValid is false while the cached VIPPools and L4Clusters are
	// inconsistent (the allocator keeps the last good ones, or none).
	configValid atomic.Bool
	// load is what the allocator holds of the VIPPools and L4Clusters,
	// for their status. Only the pool worker touches it (and Run, before
	// the worker starts).
	load loaded

	mu sync.Mutex
	// pending are Services refused for lack of a free address or of a
	// matching pool; they are tried again when addresses are freed or
	// pools change.
	pending map[string]struct{}
}

const (
	configKey = "config"
	statusKey = "status"
	// statusDelay batches pool status writes.
	statusDelay = 500 * time.Millisecond
)

// New builds a Controller; nothing runs until Run.
func New(o Options) (*Controller, error) {
	if o.Client == nil || o.Dynamic == nil || o.Log == nil {
		return nil, errors.New("ipam controller: Client, Dynamic and Log are required")
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	empty, err := ipam.NewConfig(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("build the empty VIP pool configuration: %w", err)
	}
	c := &Controller{
		opts:      o,
		log:       o.Log,
		alloc:     ipam.New(empty),
		metrics:   newMetrics(o.Registry),
		queue:     workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		poolQueue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		pending:   map[string]struct{}{},
	}
	c.kubeInformers = informers.NewSharedInformerFactory(o.Client, 0)
	svcInf := c.kubeInformers.Core().V1().Services()
	c.services = svcInf.Lister()
	c.servicesSync = svcInf.Informer().HasSynced
	if _, err := svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueService,
		UpdateFunc: func(_, n any) { c.enqueueService(n) },
		DeleteFunc: c.enqueueService,
	}); err != nil {
		return nil, fmt.Errorf("watch Services: %w", err)
	}
	c.dynInformers = dynamicinformer.NewDynamicSharedInformerFactory(o.Dynamic, 0)
	onCRD := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.poolQueue.Add(configKey) },
		UpdateFunc: func(_, _ any) { c.poolQueue.Add(configKey) },
		DeleteFunc: func(any) { c.poolQueue.Add(configKey) },
	}
	poolInf := c.dynInformers.ForResource(v1alpha1.VIPPoolResource)
	clusterInf := c.dynInformers.ForResource(v1alpha1.L4ClusterResource)
	c.pools, c.clusters = poolInf.Lister(), clusterInf.Lister()
	registerPoolCollector(o.Registry, c)
	for _, inf := range []cache.SharedIndexInformer{poolInf.Informer(), clusterInf.Informer()} {
		if _, err := inf.AddEventHandler(onCRD); err != nil {
			return nil, fmt.Errorf("watch VIPPools and L4Clusters: %w", err)
		}
		c.crdSync = append(c.crdSync, inf.HasSynced)
	}
	return c, nil
}

// Run starts informers, waits for their caches, rebuilds the allocations
// from the API server and syncs until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	defer c.poolQueue.ShutDown()

	bc := record.NewBroadcaster(record.WithContext(ctx))
	bc.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.opts.Client.CoreV1().Events("")})
	defer bc.Shutdown()
	c.recorder = bc.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "tlb-ipam", Host: c.opts.Identity})

	c.kubeInformers.Start(ctx.Done())
	c.dynInformers.Start(ctx.Done())
	defer c.kubeInformers.Shutdown()
	defer c.dynInformers.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), append([]cache.InformerSynced{c.servicesSync}, c.crdSync...)...) {
		return fmt.Errorf("wait for Service, VIPPool and L4Cluster caches: %w", ctx.Err())
	}
	if err := c.applyConfig(); err != nil {
		c.log.Error("VIP pool configuration rejected; starting with no pools", "err", err)
	}
	c.rebuild()
	c.log.Info("ipam controller started", "workers", c.opts.Workers)

	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.serviceWorker, time.Second) })
	}
	wg.Go(func() { wait.UntilWithContext(ctx, c.poolWorker, time.Second) })
	<-ctx.Done()
	c.queue.ShutDown()
	c.poolQueue.ShutDown()
	wg.Wait()
	return nil
}

func (c *Controller) enqueueService(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		c.log.Error("cannot key a Service event", "err", err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) serviceWorker(ctx context.Context) {
	for c.processService(ctx) {
	}
}

func (c *Controller) processService(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.syncService(ctx, key); err != nil {
		c.metrics.syncs.WithLabelValues("error").Inc()
		c.log.Warn("sync Service failed; retrying", "service", key, "err", err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.metrics.syncs.WithLabelValues("ok").Inc()
	c.queue.Forget(key)
	return true
}

func (c *Controller) poolWorker(ctx context.Context) {
	for {
		key, quit := c.poolQueue.Get()
		if quit {
			return
		}
		var err error
		switch key {
		case configKey:
			if err = c.applyConfig(); err != nil {
				// Bad input: keep the last good pools and say so; a
				// fix arrives as a new event, so no retry.
				c.log.Error("VIP pool configuration rejected; keeping the last good one", "err", err)
				err = nil
			}
		case statusKey:
			err = c.writePoolStatus(ctx)
		}
		if err != nil {
			c.log.Warn("pool sync failed; retrying", "key", key, "err", err)
			c.poolQueue.AddRateLimited(key)
		} else {
			c.poolQueue.Forget(key)
		}
		c.poolQueue.Done(key)
	}
}

// markPending remembers a Service refused for lack of addresses.
func (c *Controller) markPending(key string, pending bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pending {
		c.pending[key] = struct{}{}
	} else {
		delete(c.pending, key)
	}
}

// retryPending requeues every Service refused for lack of addresses.
func (c *Controller) retryPending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.pending {
		c.queue.Add(k)
	}
}
