package controller

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/ipam"
)

// TestBadPoolKeepsLastGoodConfig: an overlapping VIPPool is refused as a
// whole, the metric says so, and Services keep being served from the last
// good pools.
func TestBadPoolKeepsLastGoodConfig(t *testing.T) {
	class := api.LoadBalancerClass
	svc := func(name string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{api.AnnotationEnvironment: "prod"}},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class},
		}
	}
	kc := fake.NewClientset(svc("a"))
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.VIPPoolResource: "VIPPoolList", v1alpha1.L4ClusterResource: "L4ClusterList",
	},
		unstr(t, &v1alpha1.L4Cluster{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
			ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: v1alpha1.L4ClusterSpec{Environment: "prod"}}),
		unstr(t, &v1alpha1.VIPPool{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
			ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.VIPPoolSpec{L4Cluster: "c", CIDRs: []string{"203.0.113.0/30"}}}),
	)
	reg := prometheus.NewRegistry()
	c, ctx := runController(t, Options{Client: kc, Dynamic: dc, Registry: reg})

	waitIP := func(name, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			s, err := kc.CoreV1().Services("ns").Get(ctx, name, metav1.GetOptions{})
			if err == nil && len(s.Status.LoadBalancer.Ingress) == 1 && s.Status.LoadBalancer.Ingress[0].IP == want {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s did not get %s", name, want)
	}
	waitIP("a", "203.0.113.0")
	if v := gauge(t, c.metrics.configValid); v != 1 {
		t.Fatalf("tlb_ipam_config_valid = %v with good pools", v)
	}

	// A pool that overlaps p: the whole new set is refused.
	bad := unstr(t, &v1alpha1.VIPPool{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: "overlap"}, Spec: v1alpha1.VIPPoolSpec{L4Cluster: "c", CIDRs: []string{"203.0.113.0/24"}}})
	if _, err := dc.Resource(v1alpha1.VIPPoolResource).Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gauge(t, c.metrics.configValid) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("overlapping pool not refused")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The last good pools still serve: the next Service gets p's next
	// address, not one from the refused /24.
	if _, err := kc.CoreV1().Services("ns").Create(ctx, svc("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitIP("b", "203.0.113.1")
	if u := c.alloc.PoolUsage("overlap"); u != (ipam.Usage{}) {
		t.Fatalf("refused pool is in use: %+v", u)
	}
}
