//go:build !lab

package bgp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/bgp/birdlab"
)

// rackBRouter is the second router address, rack b's, in the router
// namespace (rack a's is the lab's RouterAddr).
const rackBRouter = "198.18.0.250"

// TestNodeLabelsChooseThePeers: one configuration lists rack a's and rack
// b's routers with node selectors; the director peers only with its
// rack's, an unrelated label change leaves the session alone, and moving
// the node to rack b closes rack a's session and opens rack b's, without a
// restart.
func TestNodeLabelsChooseThePeers(t *testing.T) {
	l := needLab(t)
	ctx := context.Background()
	undo, err := l.AddRouterAddr(ctx, rackBRouter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(undo)
	r := birdlab.StartForTest(t, l.Router, birdlab.RouterConfig{RouterID: l.RouterAddr, ASN: routerASN, Neighbors: []birdlab.Neighbor{
		{Name: "racka", Address: l.DirectorAddrs[0], ASN: directorASN, Local: l.RouterAddr},
		{Name: "rackb", Address: l.DirectorAddrs[0], ASN: directorASN, Local: rackBRouter},
	}})
	cfg := speakerConfig(l, 0)
	peerA := cfg.Peers[0]
	peerA.NodeSelectors = rackSelector("a")
	peerB := peerA
	peerB.Address, peerB.NodeSelectors = rackBRouter, rackSelector("b")
	cfg.Peers = []bgp.PeerConfig{peerA, peerB}
	s := startSpeaker(t, cfg)
	if err := s.Announce(ctx, prefixes(vipSubnet)); err != nil {
		t.Fatal(err)
	}
	if peers := s.Peers(); len(peers) != 0 {
		t.Errorf("peers before the node's labels are known = %v, want none", peers)
	}

	if err := s.SetNodeLabels(ctx, map[string]string{rackLabel: "a"}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, r, "racka", 15*time.Second)
	if _, _, err := r.WaitRoutes(ctx, vipSubnet, 10*time.Second, hasNextHops(l.DirectorAddrs[0])); err != nil {
		t.Fatal(err)
	}
	since := sessionSince(t, r, "racka")
	if st, _ := r.ProtocolState(ctx, "rackb"); st == "Established" {
		t.Error("rack b's router is Established with a rack a director")
	}

	if err := s.SetNodeLabels(ctx, map[string]string{rackLabel: "a", "unrelated": "x"}); err != nil {
		t.Fatal(err)
	}
	if got := sessionSince(t, r, "racka"); got != since {
		t.Errorf("an unrelated label change reset rack a's session (since %s, now %s)", since, got)
	}

	if err := s.SetNodeLabels(ctx, map[string]string{rackLabel: "b"}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, r, "rackb", 15*time.Second)
	waitSession(t, r, "racka", func(s birdlab.Session) bool { return s.State != "Established" && s.Imported == 0 })
	routes, _, err := r.WaitRoutes(ctx, vipSubnet, 10*time.Second, hasNextHops(l.DirectorAddrs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if routes[0].Protocol != "rackb" {
		t.Errorf("%s learned over %s, want rackb", vipSubnet, routes[0].Protocol)
	}
	if peers := s.Peers(); len(peers) != 1 || peers[0].Address != rackBRouter {
		t.Errorf("speaker peers = %v, want only %s", peers, rackBRouter)
	}
}

const rackLabel = "topology.tlb.io/rack"

func rackSelector(rack string) []metav1.LabelSelector {
	return []metav1.LabelSelector{{MatchLabels: map[string]string{rackLabel: rack}}}
}

// sessionSince returns the Since column of BIRD's protocol name: when
// the session last changed state.
func sessionSince(t *testing.T, r *birdlab.Router, name string) string {
	t.Helper()
	out, err := r.Birdc(context.Background(), "show", "protocols", name)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 5 && f[0] == name {
			return f[4]
		}
	}
	t.Fatalf("protocol %s not in %q", name, out)
	return ""
}
