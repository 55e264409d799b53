package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/tlb/config"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

// recordingProgrammer stands in for anyip+IPVS (the kernel parts are
// proven in the lab); it records the weights it was asked for.
type recordingProgrammer struct {
	mu   sync.Mutex
	last model.Desired
}

func (p *recordingProgrammer) Program(_ context.Context, d model.Desired) (director.Result, error) {
	p.mu.Lock()
	p.last = d
	p.mu.Unlock()
	return director.Result{}, nil
}

func (p *recordingProgrammer) weight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.last.Services) == 0 {
		return -1
	}
	return p.last.Services[0].RealServers[0].Weight
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}

func get(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

// TestServeWiresHealthGTMReadinessAndDrain runs tlb run's wiring on the
// host with a real HTTP health endpoint on loopback: the real server's
// health drives its weight, /readyz and /vip/<VIP> on the metrics
// listener; cancelling (SIGTERM) returns only after the drain period.
func TestServeWiresHealthGTMReadinessAndDrain(t *testing.T) {
	var healthy atomic.Bool
	healthy.Store(true)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer hs.Close()
	hport := hs.Listener.Addr().(*net.TCPAddr).Port
	mport := freePort(t)
	path := filepath.Join(t.TempDir(), "tlb.yaml")
	data := fmt.Sprintf(`director:
  metricsAddress: 127.0.0.1:%d
  vipRanges: [203.0.113.0/24]
  drainPeriod: 700ms
services:
  - vip: 203.0.113.10
    port: 80
    realServers: [{address: 127.0.0.1, weight: 5}]
health: {kind: http, port: %d, interval: 50ms, timeout: 50ms, rise: 1, fall: 2}
`, mport, hport)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := obs.NewServer(cfg.Director.MetricsAddress, log)
	prog := &recordingProgrammer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, path, cfg, nil, srv, prog, drainWiring{}, bgpWiring{}, prometheus.NewCounter(prometheus.CounterOpts{Name: "x"}), log)
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", mport)

	eventually(t, "ready with the real server up", func() bool { c, _ := get(base + "/readyz"); return c == 200 })
	if c, body := get(base + "/vip/203.0.113.10"); c != 200 || !strings.Contains(body, "up healthy=1 total=1") {
		t.Errorf("GTM = %d %q, want 200 up", c, body)
	}
	if w := prog.weight(); w != 5 {
		t.Errorf("programmed weight %d, want the configured 5", w)
	}

	healthy.Store(false)
	eventually(t, "weight 0 for the down real server", func() bool { return prog.weight() == 0 })
	eventually(t, "not ready", func() bool { c, _ := get(base + "/readyz"); return c == 503 })
	if c, body := get(base + "/vip/203.0.113.10"); c != 503 || !strings.Contains(body, "down healthy=0") {
		t.Errorf("GTM = %d %q, want 503 down", c, body)
	}
	if c, body := get(base + "/metrics"); c != 200 || !strings.Contains(body, "tlb_director_ready 0") {
		t.Errorf("metrics lack tlb_director_ready 0 (status %d)", c)
	}

	healthy.Store(true)
	eventually(t, "ready again", func() bool { c, _ := get(base + "/readyz"); return c == 200 })
	stopAt := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve = %v", err)
		}
		if d := time.Since(stopAt); d < 700*time.Millisecond {
			t.Errorf("serve returned %v after cancel, before the 700ms drain", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after cancel")
	}
	if w := prog.weight(); w != 5 {
		t.Errorf("last programmed weight %d; shutdown must not reprogram", w)
	}
}

// TestResyncLatestRepeatsTheLatestModel: in Kubernetes mode the latest
// model from the source is sent again on every tick (so drift is
// repaired), a newer one replaces it, and nothing is sent before the first.
func TestResyncLatestRepeatsTheLatestModel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, out := make(chan model.Desired), make(chan model.Desired)
	go resyncLatest(ctx, in, out, 20*time.Millisecond)
	select {
	case d := <-out:
		t.Fatalf("sent %+v before the source gave a model", d)
	case <-time.After(100 * time.Millisecond):
	}
	ranges := func(d model.Desired) int { return len(d.VIPRanges) }
	go func() { in <- model.Desired{} }()
	for i := range 3 {
		if d := <-out; ranges(d) != 0 {
			t.Fatalf("send %d: %+v, want the first model again", i, d)
		}
	}
	go func() { in <- model.Desired{VIPRanges: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}} }()
	// At most one more copy of the first may have been in flight.
	for i := range 3 {
		d := <-out
		if ranges(d) == 1 {
			break
		}
		if i == 2 {
			t.Fatal("the newer model never replaced the first")
		}
	}
	for i := range 3 {
		if d := <-out; ranges(d) != 1 {
			t.Fatalf("resend %d after the newer model: %+v", i, d)
		}
	}
}
