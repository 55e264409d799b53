//go:build !lab

package bgp_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/bgp/birdlab"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
)

// TestBGPPeerPasswordSecret: two directors take a BGPPeer whose
// passwordSecretRef names a Secret, through the director's conversion
// (tlb/kube.BuildBGP) and SetPeers, against one BIRD that wants a
// password: the one whose Secret holds it comes up, the one whose Secret
// holds a wrong one stays down; once its Secret is corrected, the new
// policy brings its session up without restarting the speaker.
func TestBGPPeerPasswordSecret(t *testing.T) {
	l := needLab(t)
	ctx := context.Background()
	const secret = "tlb-bgppeer-Secret"
	nbrs := neighbors(l, 2)
	for i := range nbrs {
		nbrs[i].Password = secret
	}
	r := startRouter(t, l, nbrs)
	peer := v1alpha1.BGPPeer{ObjectMeta: metav1.ObjectMeta{Name: "tor"}, Spec: v1alpha1.BGPPeerSpec{
		Address: l.RouterAddr, ASN: routerASN, HoldTimeSeconds: 3, KeepaliveSeconds: 1,
		PasswordSecretRef: &v1alpha1.BGPPeerSecretRef{Name: "tor-md5"}}}
	// peers converts the BGPPeer for director i with the Secret holding
	// password. Both lab directors share one namespace, so each is given
	// its own source address, which a real director's kernel chooses.
	peers := func(i int, password string) []bgp.PeerConfig {
		t.Helper()
		p, errs := tlbkube.BuildBGP(nil, []v1alpha1.BGPPeer{peer}, map[string]*corev1.Secret{"tor-md5": {
			ObjectMeta: metav1.ObjectMeta{Name: "tor-md5"}, Data: map[string][]byte{"password": []byte(password + "\n")}}}, nil, "l4")
		if len(errs) != 0 || len(p.Peers) != 1 {
			t.Fatalf("BuildBGP: peers %v, errors %v", p.Peers, errs)
		}
		p.Peers[0].LocalAddress = l.DirectorAddrs[i]
		return p.Peers
	}
	speakers := make([]*bgp.Speaker, 2)
	for i, pw := range []string{secret, "wrong-password"} {
		cfg := speakerConfig(l, i)
		cfg.Peers = nil // every peer comes from the BGPPeer
		speakers[i] = startSpeaker(t, cfg)
		if err := speakers[i].SetPeers(ctx, peers(i, pw)); err != nil {
			t.Fatal(err)
		}
	}
	waitEstablished(t, r, director(0), 20*time.Second)
	// Give the wrong password as long as the right one had, and more.
	time.Sleep(5 * time.Second)
	if st, err := r.ProtocolState(ctx, director(1)); err != nil || st == "Established" {
		t.Fatalf("session with the wrong Secret is %q (%v)", st, err)
	}
	since := sessionSince(t, r, director(0))

	if err := speakers[1].SetPeers(ctx, peers(1, secret)); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, r, director(1), 20*time.Second)
	waitSession(t, r, director(0), func(s birdlab.Session) bool { return s.State == "Established" })
	if got := sessionSince(t, r, director(0)); got != since {
		t.Errorf("the other director's session was reset (since %s, now %s)", since, got)
	}
	t.Logf("right Secret: Established; wrong Secret: down until corrected, then Established")
}
