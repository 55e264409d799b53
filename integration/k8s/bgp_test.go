//go:build k8s

package k8s

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/bgp"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
)

// TestRBACDirectorBGPPolicy: as ServiceAccount tlb-director (its role in
// deploy/director/rbac.yaml), the director's BGP source syncs and emits
// its Node's labels, its BGPPeers and its VIPPools' spec.bgp, and a
// relabelled Node reaches it without a restart; the BGPPeer's spec.bfd
// reaches it as the file's bfd settings would. A BGPPeer's
// passwordSecretRef is read from a Secret of tlb-system (the director's
// Role); a changed password reaches it too, and the director cannot read
// the Secrets of another namespace.
func TestRBACDirectorBGPPolicy(t *testing.T) {
	installRBAC(t, "deploy/director/rbac.yaml")
	ctx := context.Background()
	kc, dc := clients(t)
	const nodeName, cluster = "rbac-bgp-dir", "rbac-bgp"
	node, err := kc.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName,
		Labels: map[string]string{"topology.tlb.io/rack": "a"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kc.CoreV1().Nodes().Delete(context.Background(), nodeName, metav1.DeleteOptions{}) })
	createObject(t, dc, v1alpha1.BGPPeerResource, &v1alpha1.BGPPeer{
		TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "BGPPeer"}, ObjectMeta: metav1.ObjectMeta{Name: "rbac-bgp-tor-a"},
		Spec: v1alpha1.BGPPeerSpec{Address: "198.18.60.1", ASN: 64500, L4Cluster: cluster,
			NodeSelectors:     []metav1.LabelSelector{{MatchLabels: map[string]string{"topology.tlb.io/rack": "a"}}},
			PasswordSecretRef: &v1alpha1.BGPPeerSecretRef{Name: "rbac-bgp-tor-a-md5"},
			BFD:               &v1alpha1.BGPPeerBFD{Enabled: true, MinRxMilliseconds: 50, Multiplier: 3}},
	})
	sec, err := kc.CoreV1().Secrets("tlb-system").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rbac-bgp-tor-a-md5"},
		StringData: map[string]string{"password": "first-md5"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().Secrets("tlb-system").Delete(context.Background(), sec.Name, metav1.DeleteOptions{})
	})
	lp := int64(200)
	createObject(t, dc, v1alpha1.L4ClusterResource, &v1alpha1.L4Cluster{
		TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"}, ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec: v1alpha1.L4ClusterSpec{Environment: "rbacbgp"},
	})
	createObject(t, dc, v1alpha1.VIPPoolResource, &v1alpha1.VIPPool{
		TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"}, ObjectMeta: metav1.ObjectMeta{Name: "rbac-bgp-pool"},
		Spec: v1alpha1.VIPPoolSpec{CIDRs: []string{"203.0.113.176/28"}, L4Cluster: cluster,
			BGP: &v1alpha1.VIPPoolBGP{Communities: []string{"64512:100"}, LocalPreference: &lp}},
	})
	// The server is shared: leave no pool, cluster or peer to later tests.
	t.Cleanup(func() {
		ctx := context.Background()
		_ = dc.Resource(v1alpha1.VIPPoolResource).Delete(ctx, "rbac-bgp-pool", metav1.DeleteOptions{})
		_ = dc.Resource(v1alpha1.L4ClusterResource).Delete(ctx, cluster, metav1.DeleteOptions{})
		_ = dc.Resource(v1alpha1.BGPPeerResource).Delete(ctx, "rbac-bgp-tor-a", metav1.DeleteOptions{})
	})
	c := serviceAccountClients(t, "tlb-director")
	if _, err := c.Kube.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the director lists the Secrets of namespace default: err %v, want Forbidden", err)
	}
	src, err := tlbkube.NewBGPSource(c.Kube, c.Dynamic, nodeName, cluster, "tlb-system", rbacLog())
	if err != nil {
		t.Fatal(err)
	}
	rec := &latest[tlbkube.BGPPolicy]{}
	runUntilCleanup(t, "director bgp source", func(ctx context.Context) error { return src.Run(ctx, rec.set) })
	eventually(t, 30*time.Second, "the director's bgp policy", func() (bool, string) {
		p, _ := rec.get()
		ok := p.NodeLabels["topology.tlb.io/rack"] == "a" && len(p.Peers) == 1 && p.Peers[0].Address == "198.18.60.1" &&
			p.Peers[0].Password == "first-md5" && p.Peers[0].BFD == bgp.BFDConfig{Enabled: true, MinRxMilliseconds: 50, Multiplier: 3} &&
			len(p.Advertisements) == 1 && p.Advertisements[0].Communities[0] == "64512:100" && *p.Advertisements[0].LocalPreference == 200
		return ok, fmt.Sprintf("%+v", p)
	})

	sec.Data = map[string][]byte{"password": []byte("second-md5")}
	if _, err := kc.CoreV1().Secrets("tlb-system").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the changed password", func() (bool, string) {
		p, _ := rec.get()
		return len(p.Peers) == 1 && p.Peers[0].Password == "second-md5", fmt.Sprintf("%+v", p.Peers)
	})

	node.Labels["topology.tlb.io/rack"] = "b"
	if _, err := kc.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the relabelled node's policy", func() (bool, string) {
		p, _ := rec.get()
		return p.NodeLabels["topology.tlb.io/rack"] == "b", fmt.Sprintf("%v", p.NodeLabels)
	})
}

// TestBGPFieldsRefusedByTheSchema: the API server refuses BGPPeers and
// VIPPool BGP settings BGP cannot carry, naming the field.
func TestBGPFieldsRefusedByTheSchema(t *testing.T) {
	_, dc := clients(t)
	peer := func(mut func(*v1alpha1.BGPPeerSpec)) any {
		p := &v1alpha1.BGPPeer{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "BGPPeer"},
			ObjectMeta: metav1.ObjectMeta{Name: "refused"}, Spec: v1alpha1.BGPPeerSpec{Address: "198.18.61.1", ASN: 64500}}
		mut(&p.Spec)
		return p
	}
	lp, agg, agg129 := int64(1<<32), int32(33), int32(129)
	pool := func(b v1alpha1.VIPPoolBGP) any {
		return &v1alpha1.VIPPool{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
			ObjectMeta: metav1.ObjectMeta{Name: "refused"}, Spec: v1alpha1.VIPPoolSpec{CIDRs: []string{"203.0.113.192/28"}, L4Cluster: "x", BGP: &b}}
	}
	cases := map[string]struct {
		obj       any
		wantField string
	}{
		"peer address":   {peer(func(s *v1alpha1.BGPPeerSpec) { s.Address = "2001:db8::1" }), "spec.address"},
		"peer asn":       {peer(func(s *v1alpha1.BGPPeerSpec) { s.ASN = 0 }), "spec.asn"},
		"peer keepalive": {peer(func(s *v1alpha1.BGPPeerSpec) { s.HoldTimeSeconds, s.KeepaliveSeconds = 3, 3 }), "keepaliveSeconds"},
		"peer secret name": {peer(func(s *v1alpha1.BGPPeerSpec) {
			s.PasswordSecretRef = &v1alpha1.BGPPeerSecretRef{Name: "Not_A_Name"}
		}), "spec.passwordSecretRef.name"},
		"peer selector": {peer(func(s *v1alpha1.BGPPeerSpec) {
			s.NodeSelectors = []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Sometimes"}}}}
		}), "operator"},
		"peer bfd minRx": {peer(func(s *v1alpha1.BGPPeerSpec) {
			s.BFD = &v1alpha1.BGPPeerBFD{Enabled: true, MinRxMilliseconds: 5}
		}), "spec.bfd.minRxMilliseconds"},
		"peer bfd minTx": {peer(func(s *v1alpha1.BGPPeerSpec) {
			s.BFD = &v1alpha1.BGPPeerBFD{Enabled: true, MinTxMilliseconds: 10001}
		}), "spec.bfd.minTxMilliseconds"},
		"peer bfd multiplier": {peer(func(s *v1alpha1.BGPPeerSpec) {
			s.BFD = &v1alpha1.BGPPeerBFD{Enabled: true, Multiplier: 256}
		}), "spec.bfd.multiplier"},
		"peer bfd off with settings": {peer(func(s *v1alpha1.BGPPeerSpec) {
			s.BFD = &v1alpha1.BGPPeerBFD{Multiplier: 3}
		}), "spec.bfd: Invalid value: enabled is false"},
		"peer bfd multihop": {peer(func(s *v1alpha1.BGPPeerSpec) {
			s.BFD, s.EBGPMultihopTTL = &v1alpha1.BGPPeerBFD{Enabled: true}, 2
		}), "spec.bfd.enabled"},
		"pool community":     {pool(v1alpha1.VIPPoolBGP{Communities: []string{"65536:1"}}), "spec.bgp.communities[0]"},
		"pool large":         {pool(v1alpha1.VIPPoolBGP{LargeCommunities: []string{"1:2"}}), "spec.bgp.largeCommunities[0]"},
		"pool local pref":    {pool(v1alpha1.VIPPoolBGP{LocalPreference: &lp}), "spec.bgp.localPreference"},
		"pool aggregate len": {pool(v1alpha1.VIPPoolBGP{AggregationLength: &agg}), "spec.bgp.aggregationLength"},
		"pool aggregate 129": {pool(v1alpha1.VIPPoolBGP{AggregationLength: &agg129}), "spec.bgp.aggregationLength"},
	}
	for name, tc := range cases {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		gvr := v1alpha1.BGPPeerResource
		if u.GetKind() == "VIPPool" {
			gvr = v1alpha1.VIPPoolResource
		}
		_, err = dc.Resource(gvr).Create(context.Background(), u, metav1.CreateOptions{})
		if err == nil {
			_ = dc.Resource(gvr).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{})
			t.Errorf("%s: the API server accepted it", name)
			continue
		}
		if !strings.Contains(err.Error(), tc.wantField) {
			t.Errorf("%s: error %q does not name %s", name, err, tc.wantField)
		}
	}
	// An IPv6 pool may aggregate beyond /32.
	agg120 := int32(120)
	v6 := &v1alpha1.VIPPool{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: "v6-aggregate"},
		Spec:       v1alpha1.VIPPoolSpec{CIDRs: []string{"2001:db8:61::/120"}, L4Cluster: "x", BGP: &v1alpha1.VIPPoolBGP{AggregationLength: &agg120}}}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(v1alpha1.VIPPoolResource).Create(context.Background(), &unstructured.Unstructured{Object: m}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("an IPv6 VIPPool aggregating to /120 was refused: %v", err)
	}
	_ = dc.Resource(v1alpha1.VIPPoolResource).Delete(context.Background(), "v6-aggregate", metav1.DeleteOptions{})
}
