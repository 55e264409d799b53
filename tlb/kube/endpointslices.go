package kube

import (
	"fmt"
	"log/slog"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// endpointSlices is the director's EndpointSlice informer (the backends
// of L7 Services), beside the Caches it shares with netd: netd needs no
// endpoints and its role may not list them. Its events add ModelKey to
// the same queue; its factory starts and stops with the ModelLoop.
type endpointSlices struct {
	factory informers.SharedInformerFactory
	lister  discoverylisters.EndpointSliceLister
	synced  cache.InformerSynced
}

func newEndpointSlices(client kubernetes.Interface, queue workqueue.TypedInterface[string], log *slog.Logger) (*endpointSlices, error) {
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Discovery().V1().EndpointSlices()
	informer := inf.Informer()
	if err := informer.SetTransform(trimEndpointSlice); err != nil {
		return nil, fmt.Errorf("trim cached EndpointSlices: %w", err)
	}
	if _, err := informer.AddEventHandler(sharedkube.QueueHandler(queue, log)); err != nil {
		return nil, fmt.Errorf("add an event handler to the EndpointSlice informer: %w", err)
	}
	return &endpointSlices{factory: f, lister: inf.Lister(), synced: informer.HasSynced}, nil
}
