package kubetest

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/tlbproject/tlb/api/v1alpha1"
)

// Dynamic returns a fake dynamic client serving VIPPools, L4Clusters and BGPPeers
// and holding objs, each a v1alpha1.VIPPool or v1alpha1.L4Cluster (value
// or pointer).
func Dynamic(t testing.TB, objs ...any) *dynamicfake.FakeDynamicClient {
	t.Helper()
	var us []runtime.Object
	for _, o := range objs {
		u, err := Unstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		us = append(us, u)
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{v1alpha1.VIPPoolResource: "VIPPoolList", v1alpha1.L4ClusterResource: "L4ClusterList",
			v1alpha1.BGPPeerResource: "BGPPeerList"},
		us...)
}

// Unstructured converts a v1alpha1.VIPPool, L4Cluster or BGPPeer (value
// or pointer) to the unstructured form a dynamic client holds, with its
// apiVersion and kind set.
func Unstructured(obj any) (*unstructured.Unstructured, error) {
	var kind string
	switch o := obj.(type) {
	case v1alpha1.VIPPool:
		obj, kind = &o, "VIPPool"
	case *v1alpha1.VIPPool:
		kind = "VIPPool"
	case v1alpha1.L4Cluster:
		obj, kind = &o, "L4Cluster"
	case *v1alpha1.L4Cluster:
		kind = "L4Cluster"
	case v1alpha1.BGPPeer:
		obj, kind = &o, "BGPPeer"
	case *v1alpha1.BGPPeer:
		kind = "BGPPeer"
	default:
		return nil, fmt.Errorf("kubetest: %T is not a VIPPool, an L4Cluster or a BGPPeer", obj)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("kubetest: convert a %s to unstructured: %w", kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(v1alpha1.SchemeGroupVersion.String())
	u.SetKind(kind)
	return u, nil
}
