package kube

import (
	"io"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// TestQueueHandlerQueuesTheModelKey: every event, a tombstone (a deletion
// missed while the watch was down) included, queues the one model key.
func TestQueueHandlerQueuesTheModelKey(t *testing.T) {
	svc := &corev1.Service{}
	for name, event := range map[string]func(cache.ResourceEventHandler){
		"add":    func(h cache.ResourceEventHandler) { h.OnAdd(svc, false) },
		"update": func(h cache.ResourceEventHandler) { h.OnUpdate(svc, svc) },
		"delete": func(h cache.ResourceEventHandler) { h.OnDelete(svc) },
		"tombstone": func(h cache.ResourceEventHandler) {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: "web/shop", Obj: svc})
		},
	} {
		t.Run(name, func(t *testing.T) {
			q := workqueue.NewTyped[string]()
			defer q.ShutDown()
			event(QueueHandler(q, slog.New(slog.NewTextHandler(io.Discard, nil))))
			if q.Len() != 1 {
				t.Fatalf("queue length %d, want 1", q.Len())
			}
			if k, _ := q.Get(); k != ModelKey {
				t.Errorf("queued %q, want %q", k, ModelKey)
			}
		})
	}
}
