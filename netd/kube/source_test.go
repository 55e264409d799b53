package kube

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/ipam/api/v1alpha1"
	"github.com/tlbproject/tlb/netd/model"
)

func unstructuredOf(t *testing.T, obj any, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(v1alpha1.SchemeGroupVersion.String())
	u.SetKind(kind)
	return u
}

// TestSourceWaitsForItsNode runs a Source against fake clients (the real
// API server is used in integration/k8sagents): nothing is emitted while
// the node's Node object is missing; its creation emits the model; a
// Service of a cluster it does not serve emits nothing; a served one does.
func TestSourceWaitsForItsNode(t *testing.T) {
	east, west := l4("east", ""), l4("west", "wg")
	pe, pw := pool("a", "east", "203.0.113.0/25"), pool("w", "west", "203.0.113.128/25")
	kc := fake.NewClientset(svc("web", "east", "203.0.113.10"))
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{v1alpha1.VIPPoolResource: "VIPPoolList", v1alpha1.L4ClusterResource: "L4ClusterList"},
		unstructuredOf(t, &east, "L4Cluster"), unstructuredOf(t, &west, "L4Cluster"),
		unstructuredOf(t, &pe, "VIPPool"), unstructuredOf(t, &pw, "VIPPool"))
	src, err := NewSource(kc, dc, "gw-1", DefaultLocal(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	models := make(chan model.Gateway, 10)
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, func(g model.Gateway) { models <- g }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	next := func(what string) model.Gateway {
		t.Helper()
		select {
		case g := <-models:
			return g
		case <-time.After(10 * time.Second):
			t.Fatalf("no model emitted: %s", what)
		}
		return model.Gateway{}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case g := <-models:
			t.Fatalf("%s: unexpected model emitted: %+v", what, g)
		case <-time.After(500 * time.Millisecond):
		}
	}

	quiet("the Node does not exist yet")
	if _, err := kc.CoreV1().Nodes().Create(ctx, node("gw-1", true, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if g := next("the Node was created"); len(g.VIPs) != 1 || g.VIPs[0].String() != "203.0.113.10" || g.Tunnel != model.DefaultTunnel {
		t.Fatalf("first model = %+v", g)
	}
	if _, err := kc.CoreV1().Services("team").Create(ctx, svc("wst", "west", "203.0.113.130"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quiet("a Service of a cluster of another gateway group")
	if _, err := kc.CoreV1().Services("team").Create(ctx, svc("api", "east", "203.0.113.11"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if g := next("a served Service was added"); len(g.VIPs) != 2 {
		t.Fatalf("model = %+v, want two VIPs", g)
	}
}
