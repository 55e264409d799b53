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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/tlbproject/tlb/api/v1alpha1"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/netd/model"
)

// Source watches the API server and emits the gateway model of one node
// whenever it changes. Build it with NewSource, run it with Run.
type Source struct {
	node   string
	local  Local
	log    *slog.Logger
	caches *sharedkube.Caches
	queue  workqueue.TypedRateLimitingInterface[string]
	errs   *sharedkube.ObjectErrorLog
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
	log = log.With("node", nodeName)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "tlb-netd-model"})
	caches, err := sharedkube.NewCaches(client, dyn, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", nodeName).String()
	}, queue, log)
	if err != nil {
		return nil, fmt.Errorf("netd kube source: %w", err)
	}
	return &Source{
		node:   nodeName,
		local:  local,
		log:    log,
		caches: caches,
		queue:  queue,
		errs:   &sharedkube.ObjectErrorLog{Log: log, Message: "API object left out of the gateway model"},
	}, nil
}

// Run starts the informers, waits for their caches and then calls emit
// with the first model and with every model that differs from the last
// one emitted (on Run's goroutine, one call at a time). Until the caches
// have synced, while the node's Node object is missing, and while the API
// server is unreachable, nothing is emitted. Run returns when ctx ends;
// an error only if the caches never synced.
func (s *Source) Run(ctx context.Context, emit func(model.Gateway)) error {
	loop := &sharedkube.ModelLoop[model.Gateway]{
		What: "gateway model", Factories: []interface{ Start(<-chan struct{}) }{s.caches},
		Shutdown: []func(){s.caches.Shutdown}, Synced: s.caches.Synced,
		Queue: s.queue, Build: s.build, Log: s.log, Changed: func(log *slog.Logger, g model.Gateway) { log.Info("gateway model changed", "vips", len(g.VIPs)) },
	}
	return loop.Run(ctx, emit)
}

// build lists the caches and builds the model. A nil model and nil error
// mean it could not be built from the objects (logged); an error means
// the caches could not be read.
func (s *Source) build() (*model.Gateway, error) {
	node, err := s.caches.Nodes.Get(s.node)
	if apierrors.IsNotFound(err) {
		node, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get Node %s from the cache: %w", s.node, err)
	}
	svcs, err := s.caches.Services.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	pools, err := sharedkube.ListTyped[v1alpha1.VIPPool](s.caches.Pools, "VIPPool")
	if err != nil {
		return nil, err
	}
	clusters, err := sharedkube.ListTyped[v1alpha1.L4Cluster](s.caches.Clusters, "L4Cluster")
	if err != nil {
		return nil, err
	}
	g, errs := BuildGateway(node, svcs, pools, clusters, s.node, s.local)
	s.errs.Report(errs)
	if sharedkube.Blocking(errs) {
		return nil, nil
	}
	return &g, nil
}
