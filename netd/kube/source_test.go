package kube

import (
	"io"
	"log/slog"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/internal/kube/kubetest"
	"github.com/tlbproject/tlb/netd/model"
)

// TestSourceWaitsForItsNode runs a Source against fake clients (the real
// API server is used in integration/k8sagents): nothing is emitted while
// the node's Node object is missing; its creation emits the model; a
// Service of a cluster it does not serve emits nothing; a served one does.
func TestSourceWaitsForItsNode(t *testing.T) {
	east, west := l4("east", ""), l4("west", "wg")
	pe, pw := pool("a", "east", "203.0.113.0/25"), pool("w", "west", "203.0.113.128/25")
	kc := fake.NewClientset(svc("web", "east", "203.0.113.10"))
	dc := kubetest.Dynamic(t, east, west, pe, pw)
	src, err := NewSource(kc, dc, "gw-1", DefaultLocal(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	models := kubetest.RunSource(t, src.Run)

	models.Quiet("the Node does not exist yet")
	if _, err := kc.CoreV1().Nodes().Create(ctx, node("gw-1", true, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if g := models.Next("the Node was created"); len(g.VIPs) != 1 || g.VIPs[0].String() != "203.0.113.10" || g.Tunnel != model.DefaultTunnel {
		t.Fatalf("first model = %+v", g)
	}
	if _, err := kc.CoreV1().Services("team").Create(ctx, svc("wst", "west", "203.0.113.130"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	models.Quiet("a Service of a cluster of another gateway group")
	if _, err := kc.CoreV1().Services("team").Create(ctx, svc("api", "east", "203.0.113.11"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if g := models.Next("a served Service was added"); len(g.VIPs) != 2 {
		t.Fatalf("model = %+v, want two VIPs", g)
	}
}
