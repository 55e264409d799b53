package kube

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
)

// TestBuildBGPPeerBFD: a BGPPeer's spec.bfd reaches the speaker's peer
// field by field; a negative value leaves the object out naming the
// field; a value out of range passes to the speaker, which refuses the
// whole set naming the BGPPeer and field, so the last good peers stay.
func TestBuildBGPPeerBFD(t *testing.T) {
	on := bgpPeer("tor-a", "198.18.0.1", "", "")
	on.Spec.BFD = &v1alpha1.BGPPeerBFD{Enabled: true, MinRxMilliseconds: 50, MinTxMilliseconds: 60, Multiplier: 3}
	off := bgpPeer("tor-b", "198.18.0.2", "", "")
	neg := bgpPeer("tor-c", "198.18.0.3", "", "")
	neg.Spec.BFD = &v1alpha1.BGPPeerBFD{Enabled: true, Multiplier: -1}
	p, errs := BuildBGP(nil, []v1alpha1.BGPPeer{*on, *off, *neg}, nil, nil, "east")
	kubetest.ErrorsContain(t, errs, []string{"BGPPeer tor-c: spec.bfd.multiplier"})
	if len(p.Peers) != 2 {
		t.Fatalf("peers %+v, want tor-a and tor-b", p.Peers)
	}
	want := bgp.BFDConfig{Enabled: true, MinRxMilliseconds: 50, MinTxMilliseconds: 60, Multiplier: 3}
	if p.Peers[0].BFD != want || p.Peers[1].BFD != (bgp.BFDConfig{}) {
		t.Errorf("bfd of tor-a %+v (want %+v), of tor-b %+v (want none)", p.Peers[0].BFD, want, p.Peers[1].BFD)
	}

	sp, err := bgp.NewSpeaker(bgp.Config{LocalASN: 64512, RouterID: "198.18.255.2", AllowedPrefixes: []string{"203.0.113.0/24"}},
		slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.SetPeers(context.Background(), p.Peers); err != nil {
		t.Fatalf("good peers refused: %v", err)
	}
	for field, bad := range map[string]v1alpha1.BGPPeerBFD{
		"bfd.minRxMilliseconds": {Enabled: true, MinRxMilliseconds: 5},
		"bfd.minTxMilliseconds": {Enabled: true, MinTxMilliseconds: 10001},
		"bfd.multiplier":        {Enabled: true, Multiplier: 256},
		"bfd.enabled":           {Multiplier: 3},
	} {
		on.Spec.BFD = &bad
		p, errs := BuildBGP(nil, []v1alpha1.BGPPeer{*on, *off}, nil, nil, "east")
		if len(errs) != 0 {
			t.Fatalf("%s: BuildBGP: %v", field, errs)
		}
		err := sp.SetPeers(context.Background(), p.Peers)
		if err == nil || !strings.Contains(err.Error(), "peer BGPPeer tor-a: "+field) {
			t.Errorf("bfd %+v: err %v, want it refused naming peer BGPPeer tor-a: %s", bad, err, field)
		}
	}
}
