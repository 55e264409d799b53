package bgp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"reflect"
	"slices"

	api "github.com/osrg/gobgp/v3/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PeerPlan is the difference between the peers in GoBGP and the peers
// the node's labels select, by address.
type PeerPlan struct {
	// ToAdd are selected and not in GoBGP.
	ToAdd []PeerConfig
	// ToRemove are in GoBGP and no longer selected: their sessions close.
	ToRemove []PeerConfig
	// ToReplace are selected with another configuration than GoBGP's:
	// removed and added again.
	ToReplace []PeerConfig
	// ToKeep are selected as they are: their sessions are not touched.
	ToKeep []PeerConfig
}

// Empty reports whether the plan changes nothing.
func (p PeerPlan) Empty() bool {
	return len(p.ToAdd) == 0 && len(p.ToRemove) == 0 && len(p.ToReplace) == 0
}

// NewPeerPlan computes the plan from the active peers to the peers of
// configured that nodeLabels select. Output is in address order.
func NewPeerPlan(active map[string]PeerConfig, configured []PeerConfig, nodeLabels map[string]string) PeerPlan {
	var plan PeerPlan
	want := map[string]bool{}
	for _, p := range configured {
		if !Selects(p, nodeLabels) {
			continue
		}
		want[p.Address] = true
		old, ok := active[p.Address]
		switch {
		case !ok:
			plan.ToAdd = append(plan.ToAdd, p)
		case !reflect.DeepEqual(old, p):
			plan.ToReplace = append(plan.ToReplace, p)
		default:
			plan.ToKeep = append(plan.ToKeep, p)
		}
	}
	for addr, p := range active {
		if !want[addr] {
			plan.ToRemove = append(plan.ToRemove, p)
		}
	}
	byAddr := func(a, b PeerConfig) int { return comparePeerAddr(a.Address, b.Address) }
	for _, ps := range [][]PeerConfig{plan.ToAdd, plan.ToRemove, plan.ToReplace, plan.ToKeep} {
		slices.SortFunc(ps, byAddr)
	}
	return plan
}

// Selects reports whether peer p is used on a node labelled nodeLabels:
// it has no node selector, or one of them matches.
func Selects(p PeerConfig, nodeLabels map[string]string) bool {
	if len(p.NodeSelectors) == 0 {
		return true
	}
	for _, sel := range p.NodeSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err == nil && s.Matches(labels.Set(nodeLabels)) {
			return true
		}
	}
	return false
}

// SetNodeLabels tells the speaker its node's labels, and adds and removes
// the peers whose node selectors now match or no longer do. Sessions of
// peers still selected are not touched.
func (s *Speaker) SetNodeLabels(ctx context.Context, nodeLabels map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodeLabels = maps.Clone(nodeLabels)
	return s.syncPeersLocked(ctx)
}

// SetPeers replaces the configured peers (the file's and, in Kubernetes,
// the BGPPeers') and applies the difference as SetNodeLabels does.
// Invalid peers, or a password file that cannot be read, change nothing.
func (s *Speaker) SetPeers(ctx context.Context, peers []PeerConfig) error {
	peers = defaultedPeers(peers)
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps problems
	s.cfg.checkPeerList(&ps, peers)
	if err := errors.Join(ps...); err != nil {
		s.log.Warn("bgp peers refused; the last good ones stay", "err", err)
		return err
	}
	pws := map[string]string{}
	for i, p := range peers {
		pw, err := readPassword(i, p)
		if err != nil {
			return err
		}
		pws[p.Address] = pw
	}
	s.cfg.Peers, s.passwords = peers, pws
	return s.syncPeersLocked(ctx)
}

// syncPeersLocked applies the peer plan once the peers are managed (after
// Start, or with graceful restart after the first announcement).
func (s *Speaker) syncPeersLocked(ctx context.Context) error {
	if !s.started || !s.peersAdded {
		return nil
	}
	plan := NewPeerPlan(s.active, s.cfg.Peers, s.nodeLabels)
	if plan.Empty() {
		return nil
	}
	for _, p := range append(slices.Clone(plan.ToRemove), plan.ToReplace...) {
		if err := s.srv.DeletePeer(ctx, &api.DeletePeerRequest{Address: p.Address}); err != nil {
			return fmt.Errorf("remove bgp peer %s: %w", p.Address, err)
		}
		delete(s.active, p.Address)
		s.forgetState(p.Address)
		s.bfd.close(p.Address) // the peer hears AdminDown, not a failure
	}
	for _, p := range append(slices.Clone(plan.ToReplace), plan.ToAdd...) {
		s.setState(p.Address, p.ASN, "idle")
		// BFD first: a peer in GoBGP without its BFD session would be
		// kept by the next plan as it is, and never get one.
		if err := s.bfd.open(p); err != nil {
			return err
		}
		if err := s.srv.AddPeer(ctx, &api.AddPeerRequest{Peer: apiPeer(s.cfg, p, s.passwords[p.Address])}); err != nil {
			s.bfd.close(p.Address)
			return fmt.Errorf("add bgp peer %s as %d: %w", p.Address, p.ASN, err)
		}
		s.active[p.Address] = p
		s.log.Info("bgp peer added", "peer", p.Address, "asn", p.ASN,
			"holdTime", p.HoldTimeSeconds, "keepalive", p.KeepaliveSeconds, "md5", p.PasswordFile != "" || p.Password != "",
			"gracefulRestart", s.cfg.GracefulRestart)
	}
	s.log.Info("bgp peers changed", "added", peerAddrs(plan.ToAdd), "removed", peerAddrs(plan.ToRemove),
		"replaced", peerAddrs(plan.ToReplace), "kept", len(plan.ToKeep), "nodeLabels", s.nodeLabels)
	return nil
}

// forgetState drops a removed peer's state and session metric.
func (s *Speaker) forgetState(addr string) {
	s.stateMu.Lock()
	delete(s.states, addr)
	s.stateMu.Unlock()
	s.metrics.sessionUp.DeleteLabelValues(addr)
}

func peerAddrs(ps []PeerConfig) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Address
	}
	return out
}

// comparePeerAddr orders peer addresses (valid IPs) numerically.
func comparePeerAddr(a, b string) int {
	return netip.MustParseAddr(a).Compare(netip.MustParseAddr(b))
}
