package obs

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerReadinessAndMetrics(t *testing.T) {
	s := NewServer("127.0.0.1:0", slog.New(slog.DiscardHandler))
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "tlb_test_total", Help: "test"})
	s.Registry.MustRegister(c)
	c.Add(3)
	addr, err := s.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	if code, body := get(t, "http://"+addr+"/readyz"); code != 503 || !strings.Contains(body, "starting") {
		t.Fatalf("readyz before ready = %d %q, want 503 starting", code, body)
	}
	s.SetReady(true, "")
	if code, _ := get(t, "http://"+addr+"/readyz"); code != 200 {
		t.Fatalf("readyz after ready = %d, want 200", code)
	}
	if code, body := get(t, "http://"+addr+"/metrics"); code != 200 || !strings.Contains(body, "tlb_test_total 3") {
		t.Fatalf("metrics = %d, missing counter: %q", code, body)
	}
}
