package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/internal/poll"
)

// TestControllerWritesOnlyChanges runs the controller on fake clients (a
// logic test; the real API server proofs are in integration/k8s): a Service
// gets its VIP and annotations in one write, and a resync of the unchanged
// Service writes nothing.
func TestControllerWritesOnlyChanges(t *testing.T) {
	class := api.LoadBalancerClass
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Annotations: map[string]string{api.AnnotationEnvironment: "prod"}},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class},
	}
	kc := fake.NewClientset(svc)
	dc := fakePools(t, pool("p", "c", "203.0.113.0/30"))
	c, ctx := runController(t, Options{Client: kc, Dynamic: dc})

	poll.Explained(t, 10*time.Second, "web has a VIP in status", func() (bool, string) {
		got, err := kc.CoreV1().Services("ns").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(got.Status.LoadBalancer.Ingress) == 1, fmt.Sprintf("status %+v", got.Status)
	})
	got, _ := kc.CoreV1().Services("ns").Get(ctx, "web", metav1.GetOptions{})
	if ip := got.Status.LoadBalancer.Ingress[0].IP; ip != "203.0.113.0" || got.Annotations[api.AnnotationAssignedL4Cluster] != "c" || len(got.Finalizers) != 0 {
		t.Fatalf("VIP %s, annotations %v, finalizers %v; want 203.0.113.0, tlb.io/assigned-l4-cluster c, no finalizer", ip, got.Annotations, got.Finalizers)
	}
	writes := func() []string {
		var out []string
		for _, a := range kc.Actions() {
			if a.GetResource().Resource == "services" && (a.GetVerb() == "update" || a.GetVerb() == "patch") {
				out = append(out, a.GetVerb()+" "+a.GetSubresource())
			}
		}
		return out
	}
	before := writes()
	if !slices.Equal(before, []string{"update status"}) {
		t.Fatalf("Service writes to allocate: %v, want one update of status", before)
	}
	// Resync the unchanged Service: the diff is empty, nothing is written.
	synced := counter(t, c.metrics.syncs.WithLabelValues("ok"))
	c.queue.Add("ns/web")
	poll.Until(t, 10*time.Second, "the resync is done", func() bool { return counter(t, c.metrics.syncs.WithLabelValues("ok")) > synced })
	if after := writes(); len(after) != len(before) {
		t.Fatalf("resync of an unchanged Service wrote: %v", after[len(before):])
	}
}

// runController runs a controller of opts, with a discarding logger and
// identity "test", until the test ends, and returns it with the context
// it runs under.
func runController(t *testing.T, opts Options) (*Controller, context.Context) {
	t.Helper()
	opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Identity = "test"
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c, ctx
}
