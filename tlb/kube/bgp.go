package kube

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/bgp"
)

// BGPPolicy is what the director's BGP speaker takes from the API server:
// its node's labels (which choose the peers), the BGPPeers of its L4
// cluster and the BGP settings of its cluster's VIPPools. The caller adds
// the file's peers and advertisements and hands it to the speaker
// (bgp.Speaker.SetNodeLabels, SetPeers, SetAdvertisements).
type BGPPolicy struct {
	// NodeLabels are the labels of the director's Node; nil while the
	// Node is not found.
	NodeLabels map[string]string
	// Peers are the BGPPeers of every L4 cluster or of this one, by name,
	// each named "BGPPeer NAME" for errors.
	Peers []bgp.PeerConfig
	// Advertisements are the spec.bgp of the cluster's VIPPools, by
	// name, each named "VIPPool NAME".
	Advertisements []bgp.AdvertisementConfig
}

// BuildBGP builds the BGP policy of the director on node (nil when it is
// not found) of L4 cluster clusterName. secrets are the Secrets of the
// directors' namespace by name (nil when it is not watched), where the
// peers' passwordSecretRef point. A value the CRD schema lets through but
// BGP cannot carry, or a password that cannot be read, leaves its object
// out, with an *ObjectError. It does not modify its inputs.
func BuildBGP(node *corev1.Node, peers []v1alpha1.BGPPeer, secrets map[string]*corev1.Secret, pools []v1alpha1.VIPPool, clusterName string) (BGPPolicy, []error) {
	var p BGPPolicy
	var errs []error
	if node != nil {
		p.NodeLabels = make(map[string]string, len(node.Labels))
		for k, v := range node.Labels {
			p.NodeLabels[k] = v
		}
	}
	peers = slices.Clone(peers)
	slices.SortFunc(peers, func(a, b v1alpha1.BGPPeer) int { return cmp.Compare(a.Name, b.Name) })
	for _, bp := range peers {
		if bp.Spec.L4Cluster != "" && bp.Spec.L4Cluster != clusterName {
			continue
		}
		pc, err := peerConfig(bp)
		if err == nil {
			pc.Password, err = peerPassword(bp, secrets)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.Peers = append(p.Peers, pc)
	}
	pools = slices.Clone(pools)
	slices.SortFunc(pools, func(a, b v1alpha1.VIPPool) int { return cmp.Compare(a.Name, b.Name) })
	for _, pool := range pools {
		if pool.Spec.L4Cluster != clusterName || pool.Spec.BGP == nil {
			continue
		}
		adv, err := advertisement(pool)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.Advertisements = append(p.Advertisements, adv)
	}
	return p, errs
}

// peerConfig maps a BGPPeer to the speaker's peer; the speaker checks it
// further (SetPeers).
func peerConfig(bp v1alpha1.BGPPeer) (bgp.PeerConfig, error) {
	s := bp.Spec
	bad := func(field string, v any, max int64) error {
		return &sharedkube.ObjectError{Kind: "BGPPeer", Name: bp.Name, Field: "spec." + field,
			Reason: fmt.Sprintf("%v is not 0..%d; left out", v, max)}
	}
	switch {
	case s.ASN < 0 || s.ASN > math.MaxUint32:
		return bgp.PeerConfig{}, bad("asn", s.ASN, math.MaxUint32)
	case s.Port < 0 || s.Port > math.MaxUint16:
		return bgp.PeerConfig{}, bad("port", s.Port, math.MaxUint16)
	case s.HoldTimeSeconds < 0:
		return bgp.PeerConfig{}, bad("holdTimeSeconds", s.HoldTimeSeconds, math.MaxInt32)
	case s.KeepaliveSeconds < 0:
		return bgp.PeerConfig{}, bad("keepaliveSeconds", s.KeepaliveSeconds, math.MaxInt32)
	case s.EBGPMultihopTTL < 0 || s.EBGPMultihopTTL > math.MaxUint8:
		return bgp.PeerConfig{}, bad("ebgpMultihopTTL", s.EBGPMultihopTTL, math.MaxUint8)
	}
	b, err := peerBFD(bp)
	if err != nil {
		return bgp.PeerConfig{}, err
	}
	return bgp.PeerConfig{
		Name: "BGPPeer " + bp.Name, Address: s.Address, ASN: uint32(s.ASN), Port: uint16(s.Port),
		HoldTimeSeconds: uint32(s.HoldTimeSeconds), KeepaliveSeconds: uint32(s.KeepaliveSeconds),
		EBGPMultihopTTL: uint8(s.EBGPMultihopTTL), NodeSelectors: slices.Clone(s.NodeSelectors), BFD: b,
	}, nil
}

// peerBFD maps a BGPPeer's spec.bfd to the speaker's, which checks the
// ranges (SetPeers names "peer BGPPeer NAME: bfd.FIELD"); only a negative
// value, which the speaker's unsigned fields cannot hold, is refused here.
func peerBFD(bp v1alpha1.BGPPeer) (bgp.BFDConfig, error) {
	b := bp.Spec.BFD
	if b == nil {
		return bgp.BFDConfig{}, nil
	}
	for _, f := range []struct {
		name string
		v    int32
	}{{"minRxMilliseconds", b.MinRxMilliseconds}, {"minTxMilliseconds", b.MinTxMilliseconds}, {"multiplier", b.Multiplier}} {
		if f.v < 0 {
			return bgp.BFDConfig{}, &sharedkube.ObjectError{Kind: "BGPPeer", Name: bp.Name, Field: "spec.bfd." + f.name,
				Reason: fmt.Sprintf("%d is negative; left out", f.v)}
		}
	}
	return bgp.BFDConfig{Enabled: b.Enabled, MinRxMilliseconds: uint32(b.MinRxMilliseconds),
		MinTxMilliseconds: uint32(b.MinTxMilliseconds), Multiplier: uint32(b.Multiplier)}, nil
}

// advertisement maps a VIPPool's spec.bgp to the speaker's advertisement
// of its CIDRs; the speaker checks it further (SetAdvertisements).
func advertisement(pool v1alpha1.VIPPool) (bgp.AdvertisementConfig, error) {
	b := pool.Spec.BGP
	adv := bgp.AdvertisementConfig{Name: "VIPPool " + pool.Name, Prefixes: slices.Clone(pool.Spec.CIDRs),
		Communities: slices.Clone(b.Communities), LargeCommunities: slices.Clone(b.LargeCommunities)}
	if lp := b.LocalPreference; lp != nil {
		if *lp < 0 || *lp > math.MaxUint32 {
			return adv, &sharedkube.ObjectError{Kind: "VIPPool", Name: pool.Name, Field: "spec.bgp.localPreference",
				Reason: fmt.Sprintf("%d is not 0..%d; left out", *lp, uint32(math.MaxUint32))}
		}
		v := uint32(*lp)
		adv.LocalPreference = &v
	}
	if al := b.AggregationLength; al != nil {
		if *al < 1 || *al > 128 {
			return adv, &sharedkube.ObjectError{Kind: "VIPPool", Name: pool.Name, Field: "spec.bgp.aggregationLength",
				Reason: fmt.Sprintf("%d is not 1..128; left out", *al)}
		}
		adv.AggregationLength = uint8(*al)
	}
	return adv, nil
}
