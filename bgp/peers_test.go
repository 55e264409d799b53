package bgp

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rack(name string) []metav1.LabelSelector {
	return []metav1.LabelSelector{{MatchLabels: map[string]string{"topology.tlb.io/rack": name}}}
}

func TestPeerPlanFollowsNodeLabels(t *testing.T) {
	a := PeerConfig{Address: "198.18.0.1", ASN: 64500, NodeSelectors: rack("a")}
	b := PeerConfig{Address: "198.18.1.1", ASN: 64500, NodeSelectors: rack("b")}
	all := PeerConfig{Address: "198.18.9.1", ASN: 64501}
	configured := []PeerConfig{b, a, all}
	addrs := func(ps []PeerConfig) []string { return peerAddrs(ps) }

	plan := NewPeerPlan(map[string]PeerConfig{}, configured, map[string]string{"topology.tlb.io/rack": "a"})
	if got := addrs(plan.ToAdd); !slices.Equal(got, []string{"198.18.0.1", "198.18.9.1"}) {
		t.Errorf("rack a adds %v, want its router and the every-node peer", got)
	}
	active := map[string]PeerConfig{a.Address: a, all.Address: all}

	plan = NewPeerPlan(active, configured, map[string]string{"topology.tlb.io/rack": "a", "other": "x"})
	if !plan.Empty() || len(plan.ToKeep) != 2 {
		t.Errorf("an unrelated label change gives %+v, want both peers kept, nothing else", plan)
	}
	plan = NewPeerPlan(active, configured, map[string]string{"topology.tlb.io/rack": "b"})
	if !slices.Equal(addrs(plan.ToAdd), []string{"198.18.1.1"}) || !slices.Equal(addrs(plan.ToRemove), []string{"198.18.0.1"}) ||
		!slices.Equal(addrs(plan.ToKeep), []string{"198.18.9.1"}) {
		t.Errorf("moving to rack b gives %+v, want add b, remove a, keep the every-node peer", plan)
	}
	changed := all
	changed.HoldTimeSeconds = 9
	plan = NewPeerPlan(active, []PeerConfig{a, changed}, map[string]string{"topology.tlb.io/rack": "a"})
	if !slices.Equal(addrs(plan.ToReplace), []string{"198.18.9.1"}) || len(plan.ToAdd)+len(plan.ToRemove) != 0 {
		t.Errorf("a changed peer gives %+v, want it replaced", plan)
	}
	if plan := NewPeerPlan(active, configured, nil); !slices.Equal(addrs(plan.ToRemove), []string{"198.18.0.1"}) {
		t.Errorf("a node without labels keeps %+v, want rack a's router removed", plan)
	}
}

func TestNodeSelectorsValidated(t *testing.T) {
	c := Config{LocalASN: 64512, RouterID: "198.18.0.2", AllowedPrefixes: []string{"203.0.113.0/24"},
		Peers: []PeerConfig{{Address: "198.18.0.1", ASN: 64500, NodeSelectors: []metav1.LabelSelector{{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "rack", Operator: "Sometimes"}},
		}}}}}.Defaulted()
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "peers[0].nodeSelectors[0]") {
		t.Errorf("Validate = %v, want an error naming peers[0].nodeSelectors[0]", err)
	}
	c.Peers[0].Name = "BGPPeer tor-a"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "peer BGPPeer tor-a: nodeSelectors[0]") {
		t.Errorf("Validate = %v, want an error naming the peer", err)
	}
}
