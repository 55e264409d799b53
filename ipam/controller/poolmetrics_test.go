package controller

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
)

// TestPoolMetricsCountUsedAndFree: the pool gauges follow allocations, and
// a pool the allocator refused is left out rather than reported empty.
func TestPoolMetricsCountUsedAndFree(t *testing.T) {
	class := api.LoadBalancerClass
	svc := func(name string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{api.AnnotationEnvironment: "prod"}},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class},
		}
	}
	kc := fake.NewClientset(svc("a"))
	dc := fakePools(t, pool("p", "c", "203.0.113.0/30"))
	reg := prometheus.NewPedanticRegistry()
	c, err := New(Options{Client: kc, Dynamic: dc, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: reg, Identity: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "tlb_ipam_pool_used_addresses"); err != nil || n != 0 {
		t.Fatalf("before the pools are read: %d series (%v), want none", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	want := func(used, free int) string {
		return "# HELP tlb_ipam_pool_free_addresses Addresses of the VIPPool still free to allocate.\n" +
			"# TYPE tlb_ipam_pool_free_addresses gauge\n" +
			"tlb_ipam_pool_free_addresses{pool=\"p\"} " + strconv.Itoa(free) + "\n" +
			"# HELP tlb_ipam_pool_used_addresses Addresses of the VIPPool held (allocated to Services or reserved by other Services).\n" +
			"# TYPE tlb_ipam_pool_used_addresses gauge\n" +
			"tlb_ipam_pool_used_addresses{pool=\"p\"} " + strconv.Itoa(used) + "\n"
	}
	wait := func(used, free int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		var err error
		for time.Now().Before(deadline) {
			if err = testutil.GatherAndCompare(reg, strings.NewReader(want(used, free)),
				"tlb_ipam_pool_used_addresses", "tlb_ipam_pool_free_addresses"); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("pool gauges: %v", err)
	}
	wait(1, 3)
	if _, err := kc.CoreV1().Services("ns").Create(ctx, svc("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(2, 2)

	// An overlapping pool is refused: it never shows as an empty pool.
	bad := unstr(t, pool("overlap", "c", "203.0.113.0/24"))
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
	wait(2, 2)
}
