package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	corev1 "k8s.io/api/core/v1"
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

	"github.com/tlbproject/tlb/api/v1alpha1"
)

// BGPSource watches the director's own Node, the BGPPeers, the VIPPools
// and the Secrets of the directors' namespace (the peers' MD5 passwords),
// and emits the BGP policy (BuildBGP) whenever it changes: a node label
// or password change reaches the speaker without a restart. Build it with
// NewBGPSource, run it with Run.
type BGPSource struct {
	node, cluster string
	log           *slog.Logger
	nodes         corelisters.NodeLister
	secrets       corelisters.SecretNamespaceLister // nil without a namespace
	peers, pools  cache.GenericLister
	synced        []cache.InformerSynced
	factories     []interface {
		Start(<-chan struct{})
		Shutdown()
	}
	queue workqueue.TypedRateLimitingInterface[string]
	errs  *sharedkube.ObjectErrorLog
}

// NewBGPSource returns a BGPSource for the director on node nodeName of L4
// cluster clusterName. client watches that one Node (get, list, watch on
// nodes) and, when namespace (the directors') is set, the Secrets there
// (list, watch on secrets in that namespace only); dyn watches BGPPeers
// and VIPPools. Nothing runs until Run.
func NewBGPSource(client kubernetes.Interface, dyn dynamic.Interface, nodeName, clusterName, namespace string, log *slog.Logger) (*BGPSource, error) {
	if client == nil || dyn == nil || log == nil {
		return nil, errors.New("director bgp source: client, dynamic client and logger are required")
	}
	if nodeName == "" || clusterName == "" {
		return nil, errors.New("director bgp source: the node name and the L4 cluster name are required")
	}
	log = log.With("node", nodeName, "l4Cluster", clusterName)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "tlb-director-bgp"})
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", nodeName).String()
	}))
	dynFactory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	nodeInf := nodeFactory.Core().V1().Nodes()
	peerInf := dynFactory.ForResource(v1alpha1.BGPPeerResource)
	poolInf := dynFactory.ForResource(v1alpha1.VIPPoolResource)
	s := &BGPSource{
		node: nodeName, cluster: clusterName, log: log,
		nodes: nodeInf.Lister(), peers: peerInf.Lister(), pools: poolInf.Lister(),
		queue: queue,
		errs:  &sharedkube.ObjectErrorLog{Log: log, Message: "API object left out of the director's BGP policy"},
	}
	watched := []struct {
		kind     string
		informer cache.SharedIndexInformer
	}{{"Node", nodeInf.Informer()}, {"BGPPeer", peerInf.Informer()}, {"VIPPool", poolInf.Informer()}}
	if namespace != "" {
		secretFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
		secretInf := secretFactory.Core().V1().Secrets()
		s.secrets = secretInf.Lister().Secrets(namespace)
		watched = append(watched, struct {
			kind     string
			informer cache.SharedIndexInformer
		}{"Secret", secretInf.Informer()})
		s.factories = append(s.factories, secretFactory)
	}
	for _, inf := range watched {
		if _, err := inf.informer.AddEventHandler(sharedkube.QueueHandler(queue, log)); err != nil {
			return nil, fmt.Errorf("director bgp source: add an event handler to the %s informer: %w", inf.kind, err)
		}
		s.synced = append(s.synced, inf.informer.HasSynced)
	}
	s.factories = append(s.factories, nodeFactory, dynFactory)
	return s, nil
}

// Run starts the informers, waits for their caches and then calls emit
// with the first policy and every policy that differs from the last one
// emitted, on Run's goroutine. While the API server is unreachable nothing
// is emitted, so the speaker keeps its peers. Run returns when ctx ends.
func (s *BGPSource) Run(ctx context.Context, emit func(BGPPolicy)) error {
	var starts []interface{ Start(<-chan struct{}) }
	var shutdowns []func()
	for _, f := range s.factories {
		starts = append(starts, f)
		shutdowns = append(shutdowns, f.Shutdown)
	}
	loop := &sharedkube.ModelLoop[BGPPolicy]{
		What: "director bgp policy", Factories: starts, Shutdown: shutdowns, Synced: s.synced,
		Queue: s.queue, Build: s.build, Log: s.log, Changed: func(log *slog.Logger, p BGPPolicy) {
			log.Info("director bgp policy changed", "nodeLabels", len(p.NodeLabels), "peers", len(p.Peers), "advertisements", len(p.Advertisements))
		},
	}
	return loop.Run(ctx, emit)
}

// build lists the caches and builds the policy.
func (s *BGPSource) build() (*BGPPolicy, error) {
	node, err := s.nodes.Get(s.node)
	if apierrors.IsNotFound(err) {
		s.log.Warn("the director's Node is not found; peers with node selectors are not used", "node", s.node)
		node, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get Node %s: %w", s.node, err)
	}
	peers, err := sharedkube.ListTyped[v1alpha1.BGPPeer](s.peers, "BGPPeer")
	if err != nil {
		return nil, err
	}
	pools, err := sharedkube.ListTyped[v1alpha1.VIPPool](s.pools, "VIPPool")
	if err != nil {
		return nil, err
	}
	var secrets map[string]*corev1.Secret
	if s.secrets != nil {
		list, err := s.secrets.List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("list Secrets: %w", err)
		}
		secrets = make(map[string]*corev1.Secret, len(list))
		for _, sec := range list {
			secrets[sec.Name] = sec
		}
	}
	p, errs := BuildBGP(node, peers, secrets, pools, s.cluster)
	s.errs.Report(errs)
	return &p, nil
}
