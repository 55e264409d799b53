package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/tlbproject/tlb/l7/model"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
)

// PublishFunc hands a changed model to the xDS server and returns the
// problems it found (xds Report.Problems); problems whose Origin is a
// Service's namespace/name become Events on that Service.
type PublishFunc func(context.Context, model.Config) []model.Problem

// Source watches Services, EndpointSlices and TLS Secrets and publishes
// the L7 model whenever it changes. Build it with NewSource, run it with
// Run.
type Source struct {
	log    *slog.Logger
	events *eventSink

	factories []interface{ Start(<-chan struct{}) }
	shutdown  []func()
	services  corelisters.ServiceLister
	slices    discoverylisters.EndpointSliceLister
	secrets   corelisters.SecretLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]

	lastGood map[string]Built
}

// NewSource returns a Source reading through client; Events go to the API
// server as component "tlb-l7". Nothing runs until Run.
func NewSource(client kubernetes.Interface, log *slog.Logger) (*Source, error) {
	if client == nil || log == nil {
		return nil, errors.New("l7 kube source: client and logger are required")
	}
	s := &Source{
		log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "tlb-l7-model"}),
		lastGood: map[string]Built{},
	}
	all := informers.NewSharedInformerFactory(client, 0)
	// Only Secrets of type kubernetes.io/tls are cached.
	tls := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS)).String()
	}))
	svcInf := all.Core().V1().Services()
	sliceInf := all.Discovery().V1().EndpointSlices()
	secInf := tls.Core().V1().Secrets()
	s.services, s.slices, s.secrets = svcInf.Lister(), sliceInf.Lister(), secInf.Lister()
	for _, inf := range []cache.SharedIndexInformer{svcInf.Informer(), sliceInf.Informer(), secInf.Informer()} {
		if _, err := inf.AddEventHandler(tlbkube.QueueHandler(s.queue, log)); err != nil {
			return nil, fmt.Errorf("l7 kube source: add an event handler: %w", err)
		}
		s.synced = append(s.synced, inf.HasSynced)
	}
	s.factories = []interface{ Start(<-chan struct{}) }{all, tls}
	s.shutdown = []func(){all.Shutdown, tls.Shutdown}
	s.events = newEventSink(client, log)
	return s, nil
}

// Run starts the informers, waits for their caches, then calls publish
// with the first model and with every model that differs from the last
// one published, on Run's goroutine, one call at a time. While the API
// server is unreachable nothing is published, so the last model stays
// served. Run returns when ctx ends; an error only if the caches never
// synced.
func (s *Source) Run(ctx context.Context, publish PublishFunc) error {
	s.events.start()
	defer s.events.shutdown()
	loop := &tlbkube.ModelLoop[model.Config]{
		What: "L7 model", Factories: s.factories, Shutdown: s.shutdown, Synced: s.synced,
		Queue: s.queue, Build: s.build, Log: s.log, Changed: func(log *slog.Logger, cfg model.Config) {
			log.Info("L7 model changed", "services", len(cfg.Services), "gateways", len(cfg.Gateways), "certificates", len(cfg.Certificates))
		},
	}
	return loop.Run(ctx, func(cfg model.Config) { s.events.reportModel(publish(ctx, cfg), s.services) })
}

// build lists the caches, records the problems found as Events and
// returns the model; a Service with a problem keeps its last good
// contribution, if it had one. An error means the caches could not be
// read.
func (s *Source) build() (*model.Config, error) {
	svcs, err := s.services.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	sl, err := s.slices.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list EndpointSlices: %w", err)
	}
	secs, err := s.secrets.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list Secrets: %w", err)
	}
	built, problems := Build(svcs, sl, secs)
	s.lastGood = KeepLastGood(built, problems, s.lastGood)
	s.events.report(problems, s.services)
	cfg := Assemble(s.lastGood)
	return &cfg, nil
}

// KeepLastGood returns the Services to serve: every Service built now,
// plus, for a Service that has problems now, its previous contribution in
// last (if any). A Service neither built nor with problems (deleted or
// opted out) is dropped.
func KeepLastGood(built map[string]Built, problems []Problem, last map[string]Built) map[string]Built {
	out := make(map[string]Built, len(built))
	for k, b := range built {
		out[k] = b
	}
	for _, p := range problems {
		if _, ok := out[p.Key()]; ok {
			continue
		}
		if b, ok := last[p.Key()]; ok {
			out[p.Key()] = b
		}
	}
	return out
}
