package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/tlb/kube"
)

// bgpWiring is what the director's speaker learns about its node: the
// node's labels from --node-labels, or in Kubernetes (with --node-name) a
// source of the Node's labels, the BGPPeers and the VIPPools' BGP
// settings. The zero value learns nothing: peers with node selectors are
// then never used.
type bgpWiring struct {
	nodeLabels map[string]string
	policy     bgpPolicySource
}

// bgpPolicySource emits every new BGP policy until ctx ends.
// *kube.BGPSource implements it.
type bgpPolicySource interface {
	Run(ctx context.Context, emit func(kube.BGPPolicy)) error
}

// parseNodeLabels reads --node-labels, "key=value,key=value", with the
// label syntax Kubernetes enforces.
func parseNodeLabels(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	set, err := labels.ConvertSelectorToLabelsMap(s)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	return set, nil
}

// newBGPPolicySource builds the director's BGP policy source on node
// nodeName.
func newBGPPolicySource(k kubeFlags, nodeName string, log *slog.Logger) (bgpPolicySource, error) {
	c, err := k.Clients("tlb-director")
	if err != nil {
		return nil, err
	}
	return kube.NewBGPSource(c.Kube, c.Dynamic, nodeName, k.l4Cluster, k.namespace, log.With("source", "kubernetes-bgp"))
}

// runBGPPolicy hands every policy from source to the speaker, after the
// file's peers and advertisements, until ctx ends. A refused policy (the
// speaker names the object and field) leaves the last good one in place.
func runBGPPolicy(ctx context.Context, source bgpPolicySource, sp *bgp.Speaker, file bgp.Config, log *slog.Logger) {
	err := source.Run(ctx, func(p kube.BGPPolicy) {
		if err := sp.SetNodeLabels(ctx, p.NodeLabels); err != nil {
			log.Error("applying the node's labels to the bgp peers", "err", err)
		}
		if err := sp.SetPeers(ctx, append(slices.Clone(file.Peers), p.Peers...)); err != nil {
			log.Error("bgp peers refused; the last good ones stay", "err", err)
		}
		if err := sp.SetAdvertisements(ctx, append(slices.Clone(file.Advertisements), p.Advertisements...)); err != nil {
			log.Error("bgp advertisements refused; the last good ones stay", "err", err)
		}
	})
	if err != nil && ctx.Err() == nil {
		log.Error("kubernetes bgp policy source stopped; peers and advertisements stay as they are", "err", err)
	}
}
