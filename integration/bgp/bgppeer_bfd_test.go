//go:build !lab

package bgp_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/bgp/birdlab"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
)

// TestBGPPeerBFDAtRunTime: a director started without peers is given a
// BGPPeer with spec.bfd (through the director's conversion, BuildBGP, and
// SetPeers) while it runs: the BFD session with BIRD (`bfd on`) comes Up
// and BGP is Established. The BGPPeer removed, the director closes its
// BFD session with an AdminDown packet, which BIRD receives (an nftables
// counter on the router's link: BIRD's own view cannot tell it from the
// BGP Cease, which restarts BIRD's side of BFD too), BIRD's session is
// no longer Up and the director keeps none; added again, BFD comes Up
// again, and is closed again.
func TestBGPPeerBFDAtRunTime(t *testing.T) {
	l := needLab(t)
	ctx := context.Background()
	nbrs := neighbors(l, 1)
	nbrs[0].BFD = true
	r := birdlab.StartForTest(t, l.Router, birdlab.RouterConfig{
		RouterID: l.RouterAddr, ASN: routerASN, HoldTime: bfdHoldTime, Keepalive: 3, Neighbors: nbrs,
		BFD: &birdlab.BFD{MinRxMilliseconds: 100, MinTxMilliseconds: 100, Multiplier: 5},
	})
	cfg := speakerConfig(l, 0)
	cfg.Peers = nil // the only peer comes from the BGPPeer
	s := startSpeaker(t, cfg)
	p, errs := tlbkube.BuildBGP(nil, []v1alpha1.BGPPeer{{ObjectMeta: metav1.ObjectMeta{Name: "tor"}, Spec: v1alpha1.BGPPeerSpec{
		Address: l.RouterAddr, ASN: routerASN, HoldTimeSeconds: bfdHoldTime, KeepaliveSeconds: 3,
		BFD: &v1alpha1.BGPPeerBFD{Enabled: true, MinRxMilliseconds: 100, MinTxMilliseconds: 100, Multiplier: 5}}}}, nil, nil, "l4")
	if len(errs) != 0 || len(p.Peers) != 1 {
		t.Fatalf("BuildBGP: peers %+v, errors %v", p.Peers, errs)
	}
	p.Peers[0].LocalAddress = l.DirectorAddrs[0] // the lab's directors share a namespace
	if bird := birdBFD(t, r); len(bird) == 1 && bird[0].State == "Up" {
		t.Fatalf("bird's bfd session is Up before the director has the peer: %+v", bird)
	}
	adminDown, removeCounter, err := l.CountBFDAdminDown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = removeCounter() })
	for round := 1; round <= 2; round++ {
		start := time.Now()
		if err := s.SetPeers(ctx, p.Peers); err != nil {
			t.Fatal(err)
		}
		waitBFDUp(t, r, s, l.DirectorAddrs[0])
		up := time.Since(start)
		waitEstablished(t, r, director(0), 20*time.Second)

		before := readCount(t, adminDown)
		if before != 0 {
			t.Fatalf("round %d: the director sent %d AdminDown packets while the BGPPeer was there", round, before)
		}
		start = time.Now()
		if err := s.SetPeers(ctx, nil); err != nil {
			t.Fatal(err)
		}
		var bird []birdlab.BFDSession
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if bird = birdBFD(t, r); len(bird) != 1 || bird[0].State != "Up" {
				break
			}
		}
		down := time.Since(start)
		var told int
		for deadline := time.Now().Add(5 * time.Second); told == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			told = readCount(t, adminDown)
		}
		if told == 0 {
			t.Errorf("round %d: bird received no BFD AdminDown packet after the BGPPeer was removed", round)
		}
		if len(bird) == 1 && bird[0].State == "Up" {
			t.Fatalf("round %d: bird's bfd session still Up %v after the BGPPeer was removed", round, down)
		}
		if ours := s.BFD(); len(ours) != 0 {
			t.Errorf("round %d: the director keeps bfd sessions after the BGPPeer was removed: %+v", round, ours)
		}
		t.Logf("FIGURE bgppeer_bfd round=%d up_after_add_ms=%d bird_not_up_after_remove_ms=%d admindown_packets=%d bird_after=%+v",
			round, up.Milliseconds(), down.Milliseconds(), told, bird)
		if err := removeCounter(); err != nil {
			t.Fatal(err)
		}
		if adminDown, removeCounter, err = l.CountBFDAdminDown(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func birdBFD(t *testing.T, r *birdlab.Router) []birdlab.BFDSession {
	t.Helper()
	ss, err := r.BFDSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func readCount(t *testing.T, count func() (int, error)) int {
	t.Helper()
	n, err := count()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
