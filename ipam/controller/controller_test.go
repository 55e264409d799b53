package controller

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/ipam"
	"github.com/tlbproject/tlb/ipam/api/v1alpha1"
)

func unstr(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestControllerWritesOnlyChanges runs the controller on fake clients (a
// logic test; the real API server proofs are in integration/k8s): a Service
// gets a VIP in status, and a resync of an unchanged Service writes nothing.
func TestControllerWritesOnlyChanges(t *testing.T) {
	class := ipam.LoadBalancerClass
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Annotations: map[string]string{ipam.AnnotationEnvironment: "prod"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class},
	}
	kc := fake.NewClientset(svc)
	scheme := runtime.NewScheme()
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		v1alpha1.VIPPoolResource: "VIPPoolList", v1alpha1.L4ClusterResource: "L4ClusterList",
	},
		unstr(t, &v1alpha1.L4Cluster{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
			ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: v1alpha1.L4ClusterSpec{Environment: "prod"}}),
		unstr(t, &v1alpha1.VIPPool{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
			ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1alpha1.VIPPoolSpec{L4Cluster: "c", CIDRs: []string{"203.0.113.0/30"}}}),
	)
	c, err := New(Options{Client: kc, Dynamic: dc, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Identity: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := kc.CoreV1().Services("ns").Get(ctx, "web", metav1.GetOptions{})
		if err == nil && len(got.Status.LoadBalancer.Ingress) == 1 {
			if ip := got.Status.LoadBalancer.Ingress[0].IP; ip != "203.0.113.0" {
				t.Fatalf("VIP %s, want 203.0.113.0", ip)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no VIP in status after 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	writes := func() int {
		n := 0
		for _, a := range kc.Actions() {
			if a.GetResource().Resource == "services" && (a.GetVerb() == "update" || a.GetVerb() == "patch") {
				n++
			}
		}
		return n
	}
	before := writes()
	if before < 2 {
		t.Fatalf("%d Service writes to allocate, want at least 2 (metadata, status)", before)
	}
	// Resync the unchanged Service: the diff is empty, nothing is written.
	c.queue.Add("ns/web")
	time.Sleep(300 * time.Millisecond)
	if after := writes(); after != before {
		t.Fatalf("resync of an unchanged Service wrote %d times", after-before)
	}
}
