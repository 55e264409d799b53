package kubetest

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tlbproject/tlb/api/v1alpha1"
)

// TestDynamicServesWhatItHolds: a value and a pointer of the two kinds are
// listed back by the fake client under their resource, with their kind;
// other types are refused.
func TestDynamicServesWhatItHolds(t *testing.T) {
	east := v1alpha1.L4Cluster{ObjectMeta: metav1.ObjectMeta{Name: "east"}}
	p := v1alpha1.VIPPool{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: v1alpha1.VIPPoolSpec{L4Cluster: "east", CIDRs: []string{"203.0.113.0/24"}}}
	dc := Dynamic(t, east, &p)
	for name, tc := range map[string]struct {
		resource schema.GroupVersionResource
		want     string // name/kind of the only object listed
	}{
		"L4Cluster value": {resource: v1alpha1.L4ClusterResource, want: "east/L4Cluster"},
		"VIPPool pointer": {resource: v1alpha1.VIPPoolResource, want: "a/VIPPool"},
	} {
		t.Run(name, func(t *testing.T) {
			l, err := dc.Resource(tc.resource).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range l.Items {
				got = append(got, u.GetName()+"/"+u.GetKind())
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("listed %q, want only %s", got, tc.want)
			}
		})
	}
	if _, err := Unstructured(struct{}{}); err == nil {
		t.Fatal("Unstructured(struct{}{}) succeeded, want an error")
	}
}
