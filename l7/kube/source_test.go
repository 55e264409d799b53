package kube

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// TestSourcePublishesOnlyChanges runs the Source against a fake clientset
// (the real API server is in integration/k8sl7): a change that does not
// touch the model publishes nothing; an endpoint change publishes.
func TestSourcePublishesOnlyChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := service("web", "shop", map[string]string{api.AnnotationL7: "true"}, "", port("http", 80))
	other := service("web", "plain", nil, "", port("http", 80))
	sl := slice("web", "shop", "shop-a", "http", 8080, ep{addr: "198.18.0.10"})
	client := fake.NewClientset(svc, other, sl)
	src, err := NewSource(client, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Group: "default", Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []model.Config
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func(_ context.Context, c model.Config) []model.Problem {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, c)
			return nil
		})
	}()
	waitCount := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if count() >= n {
				return
			}
		}
		t.Fatalf("want %d publishes, got %d", n, count())
	}
	waitCount(1)

	other.Labels = map[string]string{"touched": "yes"}
	if _, err := client.CoreV1().Services("web").Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := count(); n != 1 {
		t.Fatalf("a change outside the model published: %d publishes", n)
	}

	sl.Endpoints[0].Addresses = []string{"198.18.0.11"}
	if _, err := client.DiscoveryV1().EndpointSlices("web").Update(ctx, sl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCount(2)
	mu.Lock()
	last := got[len(got)-1]
	mu.Unlock()
	if e := last.Services[0].Upstreams[0].Endpoints; len(e) != 1 || e[0].Addr != ap("198.18.0.11:8080") {
		t.Errorf("endpoints after the change: %v", e)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
