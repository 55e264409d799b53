package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/tlbproject/tlb/ipam/api/v1alpha1"
	"github.com/tlbproject/tlb/netd/model"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
)

// Source watches the API server and emits the gateway model of one node
// whenever it changes. Build it with NewSource, run it with Run.
type Source struct {
	node  string
	local Local
	log   *slog.Logger

	factories []interface{ Start(<-chan struct{}) }
	shutdown  []func()
	services  corelisters.ServiceLister
	nodes     corelisters.NodeLister
	pools     cache.GenericLister
	clusters  cache.GenericLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]

	lastErrs map[string]bool
}

// NewSource returns a Source for the gateway node nodeName. client reads
// Services and that one Node (a field selector on metadata.name); dyn
// reads VIPPools and L4Clusters; local gives the tunnel and MSS. Nothing
// runs until Run.
func NewSource(client kubernetes.Interface, dyn dynamic.Interface, nodeName string, local Local, log *slog.Logger) (*Source, error) {
	if client == nil || dyn == nil || log == nil {
		return nil, errors.New("netd kube source: client, dynamic client and logger are required")
	}
	if nodeName == "" {
		return nil, errors.New("netd kube source: the node name is required")
	}
	s := &Source{
		node:  nodeName,
		local: local,
		log:   log.With("node", nodeName),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "tlb-netd-model"}),
		lastErrs: map[string]bool{},
	}
	svcFactory := informers.NewSharedInformerFactory(client, 0)
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", nodeName).String()
	}))
	dynFactory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	svcInf := svcFactory.Core().V1().Services()
	nodeInf := nodeFactory.Core().V1().Nodes()
	poolInf := dynFactory.ForResource(v1alpha1.VIPPoolResource)
	clusterInf := dynFactory.ForResource(v1alpha1.L4ClusterResource)
	s.services, s.nodes = svcInf.Lister(), nodeInf.Lister()
	s.pools, s.clusters = poolInf.Lister(), clusterInf.Lister()
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.queue.Add(tlbkube.ModelKey) },
		UpdateFunc: func(_, _ any) { s.queue.Add(tlbkube.ModelKey) },
		// A tombstone (cache.DeletedFinalStateUnknown) needs no
		// unwrapping: the model is rebuilt from the listers, which no
		// longer hold the object.
		DeleteFunc: func(any) { s.queue.Add(tlbkube.ModelKey) },
	}
	for _, inf := range []cache.SharedIndexInformer{svcInf.Informer(), nodeInf.Informer(), poolInf.Informer(), clusterInf.Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, fmt.Errorf("netd kube source: add an event handler: %w", err)
		}
		s.synced = append(s.synced, inf.HasSynced)
	}
	s.factories = []interface{ Start(<-chan struct{}) }{svcFactory, nodeFactory, dynFactory}
	s.shutdown = []func(){svcFactory.Shutdown, nodeFactory.Shutdown, dynFactory.Shutdown}
	return s, nil
}

// Run starts the informers, waits for their caches and then calls emit
// with the first model and with every model that differs from the last
// one emitted (on Run's goroutine, one call at a time). Until the caches
// have synced, while the node's Node object is missing, and while the API
// server is unreachable, nothing is emitted. Run returns when ctx ends;
// an error only if the caches never synced.
func (s *Source) Run(ctx context.Context, emit func(model.Gateway)) error {
	loop := &tlbkube.ModelLoop[model.Gateway]{
		What: "gateway model", Factories: s.factories, Shutdown: s.shutdown, Synced: s.synced,
		Queue: s.queue, Build: s.build, Log: s.log, Changed: func(log *slog.Logger, g model.Gateway) { log.Info("gateway model changed", "vips", len(g.VIPs)) },
	}
	return loop.Run(ctx, emit)
}

// build lists the caches and builds the model. A nil model and nil error
// mean it could not be built from the objects (logged); an error means
// the caches could not be read.
func (s *Source) build() (*model.Gateway, error) {
	node, err := s.nodes.Get(s.node)
	if apierrors.IsNotFound(err) {
		node, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get Node %s from the cache: %w", s.node, err)
	}
	svcs, err := s.services.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	pools, err := tlbkube.ListTyped[v1alpha1.VIPPool](s.pools, "VIPPool")
	if err != nil {
		return nil, err
	}
	clusters, err := tlbkube.ListTyped[v1alpha1.L4Cluster](s.clusters, "L4Cluster")
	if err != nil {
		return nil, err
	}
	g, errs := BuildGateway(node, svcs, pools, clusters, s.node, s.local)
	now := map[string]bool{}
	for _, e := range errs {
		now[e.Error()] = true
		if !s.lastErrs[e.Error()] {
			s.log.Warn("API object left out of the gateway model", "err", e.Error())
		}
	}
	s.lastErrs = now
	if tlbkube.Blocking(errs) {
		return nil, nil
	}
	return &g, nil
}
