package kube

import (
	"errors"
	"fmt"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/tlbproject/tlb/api/v1alpha1"
)

// Caches are the informer caches an L4 model is built from (Services,
// Nodes, VIPPools, L4Clusters), shared by the director's Source and
// netd's. Every event on any of them adds ModelKey to one queue. Build
// them with NewCaches; hand Start and Shutdown to a ModelLoop.
type Caches struct {
	// Services lists every Service.
	Services corelisters.ServiceLister
	// Nodes lists the Nodes the node tweak selected.
	Nodes corelisters.NodeLister
	// Pools lists VIPPools (unstructured; see ListTyped).
	Pools cache.GenericLister
	// Clusters lists L4Clusters (unstructured; see ListTyped).
	Clusters cache.GenericLister
	// Synced reports, per informer, whether its cache has synced.
	Synced []cache.InformerSynced

	factories []interface {
		Start(<-chan struct{})
		Shutdown()
	}
}

// NewCaches builds the informers: Services and Nodes through client (the
// Node list and watch narrowed by nodeTweak, which may be nil), VIPPools
// and L4Clusters through dyn. Each event adds ModelKey to queue. Nothing
// runs until Start.
func NewCaches(client kubernetes.Interface, dyn dynamic.Interface, nodeTweak func(*metav1.ListOptions),
	queue workqueue.TypedInterface[string], log *slog.Logger) (*Caches, error) {
	if client == nil || dyn == nil || queue == nil || log == nil {
		return nil, errors.New("informer caches: client, dynamic client, queue and logger are required")
	}
	svcFactory := informers.NewSharedInformerFactory(client, 0)
	var nodeOpts []informers.SharedInformerOption
	if nodeTweak != nil {
		nodeOpts = append(nodeOpts, informers.WithTweakListOptions(nodeTweak))
	}
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, nodeOpts...)
	dynFactory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	svcInf := svcFactory.Core().V1().Services()
	nodeInf := nodeFactory.Core().V1().Nodes()
	poolInf := dynFactory.ForResource(v1alpha1.VIPPoolResource)
	clusterInf := dynFactory.ForResource(v1alpha1.L4ClusterResource)
	c := &Caches{
		Services: svcInf.Lister(),
		Nodes:    nodeInf.Lister(),
		Pools:    poolInf.Lister(),
		Clusters: clusterInf.Lister(),
	}
	for _, inf := range []struct {
		kind     string
		informer cache.SharedIndexInformer
	}{
		{"Service", svcInf.Informer()}, {"Node", nodeInf.Informer()},
		{"VIPPool", poolInf.Informer()}, {"L4Cluster", clusterInf.Informer()},
	} {
		if _, err := inf.informer.AddEventHandler(QueueHandler(queue, log)); err != nil {
			return nil, fmt.Errorf("add an event handler to the %s informer: %w", inf.kind, err)
		}
		c.Synced = append(c.Synced, inf.informer.HasSynced)
	}
	c.factories = append(c.factories, svcFactory, nodeFactory, dynFactory)
	return c, nil
}

// Start starts every informer; they stop when stop is closed.
func (c *Caches) Start(stop <-chan struct{}) {
	for _, f := range c.factories {
		f.Start(stop)
	}
}

// Shutdown waits for the informers started by Start to stop (after stop
// was closed).
func (c *Caches) Shutdown() {
	for _, f := range c.factories {
		f.Shutdown()
	}
}

// QueueHandler adds ModelKey to q on every event of an informer: every
// source rebuilds its whole model from its listers. A deletion missed
// while the watch was down arrives as a tombstone
// (cache.DeletedFinalStateUnknown); only its key is logged (Debug), never
// the object (it may be a Secret), and the listers no longer hold it.
func QueueHandler(q workqueue.TypedInterface[string], log *slog.Logger) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { q.Add(ModelKey) },
		UpdateFunc: func(_, _ any) { q.Add(ModelKey) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				log.Debug("object deleted while the watch was down", "object", t.Key)
			}
			q.Add(ModelKey)
		},
	}
}
