package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// PublishFunc hands a changed model to the xDS server and returns the
// problems it found (xds Report.Problems); problems whose Origin is a
// Service's namespace/name become Events on that Service.
type PublishFunc func(context.Context, model.Config) []model.Problem

// Options say what a Source watches.
type Options struct {
	// Group is the gateway group served: only Services that ask for it
	// (tlb.io/l7-group, default "default") are read.
	Group string
	// Namespaces are the namespaces whose Services, EndpointSlices and TLS
	// Secrets are watched; empty means every namespace. A gateway group's
	// l7 watches Secrets only where it serves, so it never holds the keys
	// of another namespace.
	Namespaces []string
	// Now is the clock certificates are checked against (required).
	Now func() time.Time
	// GatewayAPI, when set, also reads Gateway API objects if their CRDs
	// are installed (see GatewayAPI); nil: annotated Services only.
	GatewayAPI *GatewayAPI
	// StandIn, when set, makes the source watch no Secret: every Secret
	// the objects refer to is this stand-in (see standInSecrets). For an
	// l7 that serves no gateway (the rate limit service's).
	StandIn *tlscert.StandIn
}

// Source watches Services, EndpointSlices and TLS Secrets and publishes
// the L7 model whenever it changes. Build it with NewSource, run it with
// Run.
type Source struct {
	log    *slog.Logger
	client kubernetes.Interface
	events *eventSink
	opts   Options
	// gatewayAPI is set, once its informers have synced, when Gateway
	// API objects are read (see watchGatewayAPI).
	gatewayAPI atomic.Pointer[gatewayAPIWatch]

	factories []interface{ Start(<-chan struct{}) }
	shutdown  []func()
	caches    []nsCache
	services  multiServiceLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
}

// nsCache is the listers of one namespace (or of all).
type nsCache struct {
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	secrets  corelisters.SecretLister
}

// NewSource returns a Source reading through client; Events go to the API
// server as component "tlb-l7". Nothing runs until Run.
func NewSource(client kubernetes.Interface, log *slog.Logger, opts Options) (*Source, error) {
	if client == nil || log == nil || opts.Group == "" || opts.Now == nil {
		return nil, errors.New("l7 kube source: client, logger, group and clock are required")
	}
	if ga := opts.GatewayAPI; ga != nil && (ga.Client == nil || ga.Build == nil) {
		return nil, errors.New("l7 kube source: Gateway API needs a client and a Build function")
	}
	s := &Source{
		log:    log,
		client: client,
		opts:   opts,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "tlb-l7-model"}),
	}
	for _, ns := range s.namespaces() {
		all := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
		// Only Secrets of type kubernetes.io/tls are cached.
		tls := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns), informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS)).String()
		}))
		svcInf := all.Core().V1().Services()
		sliceInf := all.Discovery().V1().EndpointSlices()
		c := nsCache{services: svcInf.Lister(), slices: sliceInf.Lister()}
		infs := []cache.SharedIndexInformer{svcInf.Informer(), sliceInf.Informer()}
		if opts.StandIn == nil {
			secInf := tls.Core().V1().Secrets()
			c.secrets = secInf.Lister()
			infs = append(infs, secInf.Informer())
		}
		s.caches = append(s.caches, c)
		for _, inf := range infs {
			if _, err := inf.AddEventHandler(sharedkube.QueueHandler(s.queue, log)); err != nil {
				return nil, fmt.Errorf("l7 kube source: add an event handler: %w", err)
			}
			s.synced = append(s.synced, inf.HasSynced)
		}
		s.factories = append(s.factories, all, tls)
		s.shutdown = append(s.shutdown, all.Shutdown, tls.Shutdown)
	}
	s.services = multiServiceLister(s.caches)
	s.events = newEventSink(client, log)
	return s, nil
}

// Run starts the informers, waits for their caches, then calls publish
// with the first model and with every model that differs from the last
// one published, on Run's goroutine, one call at a time. Until the caches
// have synced nothing is published (a control plane started while the API
// server is unreachable publishes nothing; it says so in its log every
// few seconds). Run returns when ctx ends; an error only if the caches
// never synced. With Options.GatewayAPI, Run also asks the API server
// which Gateway API kinds it serves (retrying until it answers) and
// watches those too: nothing is published before they have synced.
func (s *Source) Run(ctx context.Context, publish PublishFunc) error {
	synced := s.synced
	if s.opts.GatewayAPI != nil {
		ready := &atomic.Bool{}
		synced = append(slices.Clone(synced), ready.Load)
		go s.watchGatewayAPI(ctx, ready)
	}
	s.events.start()
	defer s.events.shutdown()
	loop := &sharedkube.ModelLoop[model.Config]{
		What: "L7 model", Factories: s.factories, Shutdown: s.shutdown, Synced: synced,
		Queue: s.queue, Build: s.build, Log: s.log, Changed: func(log *slog.Logger, cfg model.Config) {
			log.Info("L7 model changed", "services", len(cfg.Services), "gateways", len(cfg.Gateways), "certificates", len(cfg.Certificates))
		},
	}
	return loop.Run(ctx, func(cfg model.Config) { s.events.reportModel(publish(ctx, cfg), s.services) })
}

// build lists the caches, records the problems found as Events and
// returns the model of the Services of the source's group. A Service with
// a problem is left out. The model is a function of the objects alone.
// An error means the caches could not be read.
func (s *Source) build() (*model.Config, error) {
	var svcs, all []*corev1.Service
	var sl []*discoveryv1.EndpointSlice
	var secs []*corev1.Secret
	for _, c := range s.caches {
		ss, err := c.services.List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("list Services: %w", err)
		}
		all = append(all, ss...)
		for _, svc := range ss {
			if GroupOf(svc) == s.opts.Group {
				svcs = append(svcs, svc)
			}
		}
		es, err := c.slices.List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("list EndpointSlices: %w", err)
		}
		sl = append(sl, es...)
		if c.secrets == nil {
			continue // StandIn: no Secret is watched
		}
		ks, err := c.secrets.List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("list Secrets: %w", err)
		}
		secs = append(secs, ks...)
	}
	if s.opts.StandIn != nil {
		secs = standInSecrets(svcs, gatewayapi.Inputs{}, *s.opts.StandIn)
	}
	built, problems := Build(svcs, sl, secs, s.opts.Now())
	s.events.report(problems, s.services)
	cfg := Assemble(built)
	if w := s.gatewayAPI.Load(); w != nil {
		in, err := w.inputs(all, gatewayapi.Inputs{EndpointSlices: sl, Secrets: secs, Now: s.opts.Now()})
		if err != nil {
			return nil, err
		}
		if s.opts.StandIn != nil {
			in.Secrets = standInSecrets(nil, in, *s.opts.StandIn)
		}
		mergeGroup(&cfg, w.build(in).Config, s.opts.Group)
	}
	return &cfg, nil
}

// multiServiceLister finds a Service in whichever namespace cache holds it.
type multiServiceLister []nsCache

func (m multiServiceLister) get(ns, name string) (*corev1.Service, error) {
	var err error
	for _, c := range m {
		var svc *corev1.Service
		if svc, err = c.services.Services(ns).Get(name); err == nil {
			return svc, nil
		}
	}
	return nil, err
}
