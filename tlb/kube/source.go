package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/tlb/model"
)

// Source watches the API server and emits the director's model whenever it
// changes. Build it with NewSource, run it with Run.
type Source struct {
	cluster string
	log     *slog.Logger
	caches  *sharedkube.Caches
	slices  *endpointSlices
	queue   workqueue.TypedRateLimitingInterface[string]
	errs    *sharedkube.ObjectErrorLog
}

// NewSource returns a Source for the director of L4 cluster clusterName.
// client reads Services, Nodes (only those labelled tlb.io/gateway=true
// are cached) and EndpointSlices (the backends of L7 Services); dyn reads
// VIPPools and L4Clusters. Nothing runs until Run.
func NewSource(client kubernetes.Interface, dyn dynamic.Interface, clusterName string, log *slog.Logger) (*Source, error) {
	if client == nil || dyn == nil || log == nil {
		return nil, errors.New("director kube source: client, dynamic client and logger are required")
	}
	if clusterName == "" {
		return nil, errors.New("director kube source: the L4 cluster name is required")
	}
	log = log.With("l4Cluster", clusterName)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "tlb-director-model"})
	caches, err := sharedkube.NewCaches(client, dyn, func(o *metav1.ListOptions) {
		o.LabelSelector = api.LabelGateway + "=true"
	}, queue, log)
	if err != nil {
		return nil, fmt.Errorf("director kube source: %w", err)
	}
	eps, err := newEndpointSlices(client, queue, log)
	if err != nil {
		return nil, fmt.Errorf("director kube source: %w", err)
	}
	return &Source{
		cluster: clusterName,
		log:     log,
		caches:  caches,
		slices:  eps,
		queue:   queue,
		errs:    &sharedkube.ObjectErrorLog{Log: log, Message: "API object left out of the director model"},
	}, nil
}

// Run starts the informers, waits for their caches and then calls emit
// with the first model and with every model that differs from the last
// one emitted (emit runs on Run's goroutine, one call at a time). Until
// the caches have synced, and while the API server is unreachable,
// nothing is emitted. Run returns when ctx ends; an error only if the
// caches never synced.
func (s *Source) Run(ctx context.Context, emit func(model.Desired)) error {
	loop := &sharedkube.ModelLoop[model.Desired]{
		What: "director model", Factories: []interface{ Start(<-chan struct{}) }{s.caches, s.slices.factory},
		Shutdown: []func(){s.caches.Shutdown, s.slices.factory.Shutdown}, Synced: append(slices.Clone(s.caches.Synced), s.slices.synced),
		Queue: s.queue, Build: s.build, Log: s.log, Changed: func(log *slog.Logger, d model.Desired) {
			log.Info("director model changed", "services", len(d.Services), "vipRanges", len(d.VIPRanges))
		},
	}
	return loop.Run(ctx, emit)
}

// build lists the caches and builds the model. A nil model and nil error
// mean the model could not be built from the objects (logged); an error
// means the caches could not be read.
func (s *Source) build() (*model.Desired, error) {
	svcs, err := s.caches.Services.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	nodes, err := s.caches.Nodes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	pools, err := sharedkube.ListTyped[v1alpha1.VIPPool](s.caches.Pools, "VIPPool")
	if err != nil {
		return nil, err
	}
	clusters, err := sharedkube.ListTyped[v1alpha1.L4Cluster](s.caches.Clusters, "L4Cluster")
	if err != nil {
		return nil, err
	}
	eps, err := s.slices.lister.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list EndpointSlices: %w", err)
	}
	d, errs := BuildDesired(svcs, nodes, pools, clusters, eps, s.cluster)
	s.errs.Report(errs)
	if sharedkube.Blocking(errs) {
		return nil, nil
	}
	return &d, nil
}
