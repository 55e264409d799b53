package kube

import (
	"io"
	"log/slog"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
)

// TestSourceEmitsOnlyChanges runs a Source against fake clients (the real
// API server is used in integration/k8sagents): the first model is
// emitted once caches sync; an event that does not change the model emits
// nothing; one that does emits the new model.
func TestSourceEmitsOnlyChanges(t *testing.T) {
	east := l4("east", "")
	p := pool("a", "east", "203.0.113.0/24")
	kc := fake.NewClientset(gw("gw-1", "198.18.2.2", true, ""), svc("team", "web", "east", 1, []string{"203.0.113.10"}, port(80, corev1.ProtocolTCP)))
	dc := kubetest.Dynamic(t, east, p)
	src, err := NewSource(kc, dc, "east", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	models := kubetest.RunSource(t, src.Run)

	d := models.Next("first sync")
	if len(d.Services) != 1 || d.Services[0].VIP != netip.MustParseAddr("203.0.113.10") || len(d.Services[0].RealServers) != 1 {
		t.Fatalf("first model = %+v", d)
	}
	models.Quiet("after the first model")

	// A Service of another cluster: an event, same model.
	if _, err := kc.CoreV1().Services("team").Create(ctx, svc("team", "west", "west", 1, []string{"203.0.113.99"}, port(80, corev1.ProtocolTCP)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	models.Quiet("a Service of another L4 cluster was added")

	// The gateway goes unready: weight 0.
	n := gw("gw-1", "198.18.2.2", false, "")
	if _, err := kc.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d = models.Next("gateway became unready")
	if w := d.Services[0].RealServers[0].Weight; w != 0 {
		t.Fatalf("unready gateway has weight %d, want 0", w)
	}

	// The L4Cluster is deleted: the model cannot be built, nothing emitted.
	if err := dc.Resource(v1alpha1.L4ClusterResource).Delete(ctx, "east", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	models.Quiet("the L4Cluster was deleted")
}
