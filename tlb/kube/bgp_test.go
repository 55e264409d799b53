package kube

import (
	"io"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
)

func bgpPeer(name, addr, cluster, rack string) *v1alpha1.BGPPeer {
	p := &v1alpha1.BGPPeer{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.BGPPeerSpec{Address: addr, ASN: 64500, L4Cluster: cluster}}
	if rack != "" {
		p.Spec.NodeSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"rack": rack}}}
	}
	return p
}

func TestBuildBGP(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"rack": "a"}}}
	lp, agg, badLP := int64(200), int32(24), int64(1<<33)
	blue := pool("blue", "east", "203.0.113.0/24")
	blue.Spec.BGP = &v1alpha1.VIPPoolBGP{Communities: []string{"64512:1"}, LocalPreference: &lp, AggregationLength: &agg}
	plain := pool("plain", "east", "198.51.100.0/24")
	west := pool("west", "west", "192.0.2.0/24")
	west.Spec.BGP = &v1alpha1.VIPPoolBGP{Communities: []string{"1:1"}}
	bad := pool("bad", "east", "198.51.101.0/24")
	bad.Spec.BGP = &v1alpha1.VIPPoolBGP{LocalPreference: &badLP}
	negASN := bgpPeer("neg", "198.18.9.1", "", "")
	negASN.Spec.ASN = -1
	p, errs := BuildBGP(node, []v1alpha1.BGPPeer{*bgpPeer("tor-b", "198.18.1.1", "", "b"), *bgpPeer("tor-a", "198.18.0.1", "east", "a"),
		*bgpPeer("other", "198.18.5.1", "west", ""), *negASN}, nil,
		[]v1alpha1.VIPPool{blue, plain, west, bad}, "east")
	kubetest.ErrorsContain(t, errs, []string{"BGPPeer neg: spec.asn", "VIPPool bad: spec.bgp.localPreference"})
	if p.NodeLabels["rack"] != "a" {
		t.Errorf("node labels = %v", p.NodeLabels)
	}
	if len(p.Peers) != 2 || p.Peers[0].Name != "BGPPeer tor-a" || p.Peers[1].Address != "198.18.1.1" || len(p.Peers[1].NodeSelectors) != 1 {
		t.Errorf("peers = %+v, want tor-a and tor-b by name (not west's, not the bad one)", p.Peers)
	}
	if len(p.Advertisements) != 1 {
		t.Fatalf("advertisements = %+v, want blue's only", p.Advertisements)
	}
	a := p.Advertisements[0]
	if a.Name != "VIPPool blue" || a.Prefixes[0] != "203.0.113.0/24" || *a.LocalPreference != 200 || a.AggregationLength != 24 || a.Communities[0] != "64512:1" {
		t.Errorf("blue's advertisement = %+v", a)
	}
}

// TestBGPSourceFollowsNodeLabels: a label change on the director's Node
// emits a new policy; a change on another Node emits nothing.
func TestBGPSourceFollowsNodeLabels(t *testing.T) {
	me := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "dir-1", Labels: map[string]string{"rack": "a"}}}
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "dir-2", Labels: map[string]string{"rack": "a"}}}
	kc := fake.NewClientset(me, other)
	dc := kubetest.Dynamic(t, bgpPeer("tor-a", "198.18.0.1", "", "a"))
	src, err := NewBGPSource(kc, dc, "dir-1", "east", "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	policies := kubetest.RunSource(t, src.Run)
	p := policies.Next("first sync")
	if p.NodeLabels["rack"] != "a" || len(p.Peers) != 1 {
		t.Fatalf("first policy = %+v", p)
	}
	policies.Quiet("after the first policy")

	other.Labels["rack"] = "b"
	if _, err := kc.CoreV1().Nodes().Update(t.Context(), other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	policies.Quiet("another node was relabelled")

	me.Labels["rack"] = "b"
	if _, err := kc.CoreV1().Nodes().Update(t.Context(), me, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := policies.Next("the director's node was relabelled"); p.NodeLabels["rack"] != "b" {
		t.Errorf("node labels after the relabel = %v, want rack b", p.NodeLabels)
	}
}
