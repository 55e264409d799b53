package envoyproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/loadloop"
)

// TestL7ReplacedUnderRunningEnvoy is what an l7 upgrade does to a gateway
// node (deploy/envoy: l7 and Envoy in pods of their own): the l7 process
// ends and a new one starts on the same socket while Envoy keeps running.
// A client sending requests through Envoy all along sees no failure;
// Envoy keeps its process (same PID, never exited) and serves config that
// only the new l7 has (a service added to the DSL while l7 was away),
// over the stream it reopened by itself.
func TestL7ReplacedUnderRunningEnvoy(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "backend saw host %s", r.Host)
	}))
	defer backend.Close()
	vip, host := "127.0.11.1", "127.0.11.2"
	cfg, port := HelloDSL(t, vip, backend.Listener.Addr().String())
	g := StartT(t, Options{Group: "edge", Serve: []string{"--config=" + cfg}, HostIP: host})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pid := g.EnvoyCmd.Process.Pid
	target := fmt.Sprintf("http://%s:%d/", vip, port)
	get := func(h string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		req.Host = h
		resp, err := ClientTo(fmt.Sprintf("%s:%d", vip, port), nil, false).Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	load := loadloop.Start(func() error {
		code, err := get("hello.example.com")
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("answered %d", code)
		}
		return err
	})
	defer load.Stop()

	if err := g.StopL7(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// While l7 is away: a new service only the next l7 will serve, and
	// Envoy keeps answering from what it holds past a few of its retries.
	svc := fmt.Sprintf("kind: gateway/service/v1\nname: hello2\ngroup: edge\nhosts: [hello2.example.com]\nlisteners: [public/web]\n"+
		"upstreams:\n  - {name: main, endpoints: [%q]}\nroutes:\n  - {prefix: /, target: main}\n", backend.Listener.Addr().String())
	if err := os.WriteFile(filepath.Join(cfg, "svc2.yaml"), []byte(svc), 0o644); err != nil {
		t.Fatal(err)
	}
	before := load.Sent()
	for load.Sent() < before+20 || time.Since(stopped) < 3*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	if code, err := get("hello2.example.com"); err != nil || code != http.StatusNotFound {
		t.Fatalf("hello2 answered %d %v with l7 away; want 404 (not configured yet)", code, err)
	}
	if err := g.StartL7(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := g.Wait(ctx, "Envoy serves hello2 from the new l7", func(context.Context) (bool, string) {
		code, err := get("hello2.example.com")
		return err == nil && code == http.StatusOK, fmt.Sprint(code, err)
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE l7_replaced_config_served: the new l7's config served %s after it started (l7 away %s)",
		time.Since(started).Round(time.Millisecond), started.Sub(stopped).Round(time.Millisecond))
	load.Stop()
	if exited, err := g.Exited(g.EnvoyCmd); exited || g.EnvoyCmd.Process.Pid != pid {
		t.Fatalf("Envoy exited (%v) or changed process while l7 was replaced", err)
	}
	if v, err := g.Stat(ctx, "control_plane.connected_state"); err != nil || v != 1 {
		t.Errorf("control_plane.connected_state = %d (%v); want 1, connected to the new l7", v, err)
	}
	sent, failures := load.Counts()
	t.Logf("FIGURE l7_replaced_requests: %d requests through Envoy while l7 was replaced, %d failed", sent, len(failures))
	if len(failures) != 0 {
		t.Errorf("%d of %d requests failed: %v", len(failures), sent, failures)
	}
}
