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
	cp := orig.DeepCopy()
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
