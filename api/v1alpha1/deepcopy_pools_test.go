package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeepCopyIsDeep(t *testing.T) {
	orig := &VIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
		Spec:       VIPPoolSpec{CIDRs: []string{"203.0.113.0/24"}, L4Cluster: "c"},
		Status:     VIPPoolStatus{Conditions: []metav1.Condition{{Type: ConditionReady, Status: metav1.ConditionTrue}}},
	}
	lp := int64(200)
	orig.Spec.BGP = &VIPPoolBGP{Communities: []string{"64512:1"}, LocalPreference: &lp}
	cp := orig.DeepCopy()
	cp.Spec.BGP.Communities[0] = "1:1"
	*cp.Spec.BGP.LocalPreference = 1
	if orig.Spec.BGP.Communities[0] != "64512:1" || *orig.Spec.BGP.LocalPreference != 200 {
		t.Fatalf("DeepCopy shares the BGP settings: %+v", orig.Spec.BGP)
	}
	cp.Spec.CIDRs[0] = "198.51.100.0/24"
	cp.Labels["a"] = "changed"
	cp.Status.Conditions[0].Status = metav1.ConditionFalse
	if orig.Spec.CIDRs[0] != "203.0.113.0/24" || orig.Labels["a"] != "b" || orig.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Fatalf("DeepCopy shares memory with the original: %+v", orig)
	}
	list := &VIPPoolList{Items: []VIPPool{*orig}}
	lc := list.DeepCopyObject().(*VIPPoolList)
	lc.Items[0].Spec.CIDRs[0] = "x"
	if list.Items[0].Spec.CIDRs[0] != "203.0.113.0/24" {
		t.Fatal("list DeepCopyObject shares item memory")
	}
	c := &L4Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{"k": "v"}},
		Spec:   L4ClusterSpec{Encapsulation: &Encapsulation{Type: EncapsulationGUE, Port: 6080}},
		Status: L4ClusterStatus{Conditions: []metav1.Condition{{Type: ConditionReady, Reason: ReasonAllocating}}}}
	cc := c.DeepCopy()
	cc.Annotations["k"] = "w"
	cc.Status.Conditions[0].Reason = ReasonInvalid
	cc.Spec.Encapsulation.Port = 1
	if c.Annotations["k"] != "v" || c.Status.Conditions[0].Reason != ReasonAllocating {
		t.Fatal("L4Cluster DeepCopy shares annotations")
	}
	if c.Spec.Encapsulation.Port != 6080 {
		t.Fatal("L4Cluster DeepCopy shares spec.encapsulation")
	}
}

func TestBGPPeerDeepCopyIsDeep(t *testing.T) {
	orig := &BGPPeer{ObjectMeta: metav1.ObjectMeta{Name: "tor-a"}, Spec: BGPPeerSpec{Address: "198.18.0.1", ASN: 64500,
		NodeSelectors:     []metav1.LabelSelector{{MatchLabels: map[string]string{"rack": "a"}}},
		PasswordSecretRef: &BGPPeerSecretRef{Name: "tor-a-md5"}, BFD: &BGPPeerBFD{Enabled: true, Multiplier: 3}}}
	list := &BGPPeerList{Items: []BGPPeer{*orig}}
	cp := list.DeepCopyObject().(*BGPPeerList)
	cp.Items[0].Spec.NodeSelectors[0].MatchLabels["rack"] = "b"
	if orig.Spec.NodeSelectors[0].MatchLabels["rack"] != "a" {
		t.Fatal("BGPPeer DeepCopy shares its node selectors")
	}
	cp.Items[0].Spec.PasswordSecretRef.Name = "other"
	if orig.Spec.PasswordSecretRef.Name != "tor-a-md5" {
		t.Fatal("BGPPeer DeepCopy shares its passwordSecretRef")
	}
	cp.Items[0].Spec.BFD.Multiplier = 9
	if orig.Spec.BFD.Multiplier != 3 {
		t.Fatal("BGPPeer DeepCopy shares its bfd")
	}
}
