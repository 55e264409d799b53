package controller

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"

	"github.com/tlbproject/tlb/api/v1alpha1"
)

func unstr(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// pool is a VIPPool of cluster with cidrs.
func pool(name, cluster string, cidrs ...string) *v1alpha1.VIPPool {
	return &v1alpha1.VIPPool{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.VIPPoolSpec{L4Cluster: cluster, CIDRs: cidrs}}
}

// fakePools returns a fake dynamic client holding L4Cluster "c" of
// environment "prod" and pools.
func fakePools(t *testing.T, pools ...*v1alpha1.VIPPool) *fake.FakeDynamicClient {
	t.Helper()
	objs := []runtime.Object{unstr(t, &v1alpha1.L4Cluster{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: v1alpha1.L4ClusterSpec{Environment: "prod"}})}
	for _, p := range pools {
		objs = append(objs, unstr(t, p))
	}
	return fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.VIPPoolResource: "VIPPoolList", v1alpha1.L4ClusterResource: "L4ClusterList",
	}, objs...)
}

func gauge(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
