package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
)

// TestSetDrain: drain writes the annotation with the time, a second
// drain keeps the first time, undrain removes it; a node that is not a
// gateway is refused, naming the node and the label, and not changed.
func TestSetDrain(t *testing.T) {
	worker := gw("worker", "198.18.9.9", true, "")
	delete(worker.Labels, api.LabelGateway)
	kc := fake.NewClientset(gw("gw-1", "198.18.2.2", true, ""), worker)
	ctx := context.Background()
	at := time.Date(2026, 12, 3, 1, 0, 0, 0, time.FixedZone("CET", 3600))
	annotation := func(name string) (string, bool) {
		n, err := kc.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := n.Annotations[api.AnnotationDrain]
		return v, ok
	}
	if changed, err := SetDrain(ctx, kc, "gw-1", true, at); err != nil || !changed {
		t.Fatalf("drain gw-1: changed %v, %v", changed, err)
	}
	if v, _ := annotation("gw-1"); v != "2026-12-03T00:00:00Z" {
		t.Errorf("annotation %q, want the drain's time in UTC", v)
	}
	if changed, err := SetDrain(ctx, kc, "gw-1", true, at.Add(time.Hour)); err != nil || changed {
		t.Errorf("second drain: changed %v, %v; want no change", changed, err)
	}
	if v, _ := annotation("gw-1"); v != "2026-12-03T00:00:00Z" {
		t.Errorf("a second drain restarted the clock: %q", v)
	}
	if changed, err := SetDrain(ctx, kc, "gw-1", false, at); err != nil || !changed {
		t.Fatalf("undrain gw-1: changed %v, %v", changed, err)
	}
	if v, ok := annotation("gw-1"); ok {
		t.Errorf("annotation %q left after undrain", v)
	}
	_, err := SetDrain(ctx, kc, "worker", true, at)
	if err == nil || !strings.Contains(err.Error(), "Node worker") || !strings.Contains(err.Error(), api.LabelGateway) {
		t.Errorf("draining a node that is not a gateway: %v, want an error naming it and the label", err)
	}
	if _, ok := annotation("worker"); ok {
		t.Error("the refused node was annotated")
	}
	if _, err := SetDrain(ctx, kc, "nope", true, at); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("draining a missing node: %v", err)
	}
}
