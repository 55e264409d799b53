package upstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/tlbproject/tlb/internal/poll"
)

// TestCircuitBreakers: with one connection and one pending request
// allowed, a third concurrent request overflows: Envoy answers it 503
// with x-envoy-overloaded, its access log line carries the UO flag and
// upstream_rq_pending_overflow counts it, while the two admitted requests
// complete once the backend answers.
func TestCircuitBreakers(t *testing.T) {
	slow := startBackend(t, "slow", "127.0.23.214", 0)
	vip := "127.0.23.16"
	port := freePort(t, vip, 23070)
	g := startGateway(t, setup{hostIP: "127.0.23.105", files: map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: cb\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"app.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: cb
group: edge
hosts: [cb.test]
listeners: [cb/web]
upstreams:
  - name: narrow
    endpoints: [%q]
    circuitBreakers: {maxConnections: 1, maxPendingRequests: 1}
    outlierDetection: {disabled: true}
routes:
  - {prefix: /, target: narrow}
`, slow.endpoint()),
	}})
	stat := func(s string) int64 { return g.stat(t, "cluster.cb/narrow."+s) }
	// One HTTP/2 connection (h2c) carries the three requests, so one
	// Envoy worker handles them all: each worker has its own connection
	// pool, and Envoy lets a pool that has no connection open one even
	// beyond maxConnections (else its requests could never be served).
	c := newClient(vip, port, "cb.test", nil)
	tr := c.c.Transport.(*http.Transport)
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	if r := c.get(t, "/warm"); r.status != http.StatusOK || r.header == nil {
		t.Fatalf("first request: %d %q", r.status, r.body)
	}

	slow.holdRequests()
	admitted := make(chan reply, 2)
	go func() { admitted <- c.do(http.MethodGet, "/first") }()
	poll.Until(t, time.Minute, "the backend holds the first request", func() bool { return slow.inflight.Load() == 1 })
	go func() { admitted <- c.do(http.MethodGet, "/second") }()
	poll.Explained(t, time.Minute, "the second request waits in Envoy's pending queue", func() (bool, string) {
		v := stat("upstream_rq_pending_active")
		return v == 1, fmt.Sprintf("upstream_rq_pending_active %d, backend in flight %d", v, slow.inflight.Load())
	})

	third := c.get(t, "/third")
	if third.status != http.StatusServiceUnavailable || third.header.Get("x-envoy-overloaded") != "true" || third.backend() != "" {
		t.Errorf("the overflowing request: %d %q, x-envoy-overloaded %q, from %q; want Envoy's 503 with x-envoy-overloaded: true",
			third.status, third.body, third.header.Get("x-envoy-overloaded"), third.backend())
	}
	if v := stat("upstream_rq_pending_overflow"); v != 1 {
		t.Errorf("upstream_rq_pending_overflow = %d, want 1", v)
	}
	slow.release()
	for i := 0; i < 2; i++ {
		if r := <-admitted; r.err != nil || r.status != http.StatusOK {
			t.Errorf("an admitted request: %d %v, want 200 once the backend answered", r.status, r.err)
		}
	}
	poll.Explained(t, time.Minute, "the access log says UO for /third, over HTTP/2", func() (bool, string) {
		for _, l := range g.accessLog(t) {
			var e struct {
				Path     string `json:"path"`
				Flags    string `json:"response_flags"`
				Protocol string `json:"protocol"`
			}
			if json.Unmarshal([]byte(l), &e) == nil && e.Path == "/third" {
				return e.Flags == "UO" && e.Protocol == "HTTP/2", l
			}
		}
		return false, "no line for /third yet"
	})
}

// TestTimeoutsAndRetries: a route's timeout answers 504 (flag UT) long
// before a slow backend would; retries with retryOn 5xx turn a first 503
// into a 200 from the second attempt, a per-try timeout retries a first
// attempt that hangs, the default retryOn retries a refused connection
// on another endpoint; a route without retries passes the 503 on.
func TestTimeoutsAndRetries(t *testing.T) {
	be := startBackend(t, "be", "127.0.23.215", 0)
	dead := fmt.Sprintf("127.0.23.216:%d", freePort(t, "127.0.23.216", 23900)) // nothing listens
	vip := "127.0.23.17"
	port := freePort(t, vip, 23080)
	g := startGateway(t, setup{hostIP: "127.0.23.106", files: map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: to\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"app.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: to
group: edge
hosts: [to.test]
listeners: [to/web]
upstreams:
  - name: main
    endpoints: [%q]
    outlierDetection: {disabled: true}
  - name: halfdead
    endpoints: [%q, %q]
    outlierDetection: {disabled: true}
    slowStart: "off"
  - name: stickydead
    endpoints: [%q, %q]
    outlierDetection: {disabled: true}
routes:
  - {name: short, prefix: /short, target: main, timeout: 1s}
  - {name: default, prefix: /default, target: halfdead, retries: {attempts: 2}}
  - {name: sticky, prefix: /sticky, target: stickydead, retries: {attempts: 3}, sticky: {cookie: s, ttl: 1h}}
  - {name: retried, prefix: /retried, target: main, retries: {attempts: 2, retryOn: "5xx"}}
  - {name: pertry, prefix: /pertry, target: main, timeout: 30s, retries: {attempts: 1, retryOn: "5xx", perTryTimeout: 1s}}
  - {name: once, prefix: /once, target: main}
`, be.endpoint(), dead, be.endpoint(), dead, be.endpoint()),
	}})
	c := newClient(vip, port, "to.test", nil)

	t.Run("route timeout", func(t *testing.T) {
		start := time.Now()
		r := c.get(t, "/short", "x-slow-first", "timeout-1")
		took := time.Since(start)
		if r.status != http.StatusGatewayTimeout || r.body != "upstream request timeout" {
			t.Fatalf("%d %q, want Envoy's 504 upstream request timeout", r.status, r.body)
		}
		// The backend would have held it a minute; 1s is configured.
		if took > 30*time.Second {
			t.Errorf("the 504 came after %s", took)
		}
		t.Logf("504 after %s (timeout 1s)", took.Round(10*time.Millisecond))
		if v := g.stat(t, "cluster.to/main.upstream_rq_timeout"); v != 1 {
			t.Errorf("upstream_rq_timeout = %d, want 1", v)
		}
	})
	t.Run("retry on 5xx", func(t *testing.T) {
		before := be.requests.Load()
		r := c.get(t, "/retried", "x-fail-first", "retry-1")
		if r.status != http.StatusOK || r.backend() != "be" {
			t.Fatalf("%d %q, want 200 from the second attempt", r.status, r.body)
		}
		if n := be.requests.Load() - before; n != 2 {
			t.Errorf("the backend saw %d attempts, want 2", n)
		}
		if v := g.stat(t, "cluster.to/main.upstream_rq_retry_success"); v != 1 {
			t.Errorf("upstream_rq_retry_success = %d, want 1", v)
		}
	})
	t.Run("per-try timeout", func(t *testing.T) {
		before := be.requests.Load()
		start := time.Now()
		r := c.get(t, "/pertry", "x-slow-first", "pertry-1")
		if r.status != http.StatusOK {
			t.Fatalf("%d %q, want 200 from the attempt after the per-try timeout", r.status, r.body)
		}
		if n := be.requests.Load() - before; n != 2 {
			t.Errorf("the backend saw %d attempts, want 2", n)
		}
		if v := g.stat(t, "cluster.to/main.upstream_rq_per_try_timeout"); v != 1 {
			t.Errorf("upstream_rq_per_try_timeout = %d, want 1", v)
		}
		t.Logf("200 after %s (per-try timeout 1s)", time.Since(start).Round(10*time.Millisecond))
	})
	t.Run("default retryOn: connect failures", func(t *testing.T) {
		// Round robin sends every other first attempt to the dead
		// endpoint; the retry goes to the live one.
		if got := c.spread(t, 20, "/default"); got["be"] != 20 {
			t.Errorf("20 requests with one endpoint refusing connections: %v, want all answered by be", got)
		}
		if v := g.stat(t, "cluster.to/halfdead.upstream_rq_retry_success"); v < 5 {
			t.Errorf("upstream_rq_retry_success = %d, want about 10 (every request first sent to the dead endpoint)", v)
		}
	})
	t.Run("sticky route: a retry leaves the host that failed", func(t *testing.T) {
		// Ring hash maps a client's cookie to one endpoint; for about
		// half the clients that is the dead one. A retry must try
		// another host, not the same hash again. Each retry gets 10
		// picks, each finding the live host about half the time, so a
		// client fails only if all 3 retries miss: (1/2)^27, 40 clients
		// about 3e-7. No client on the dead one at all: 2^-40.
		before := g.stat(t, "cluster.to/stickydead.upstream_rq_retry")
		for i := 0; i < 40; i++ {
			r := newClient(vip, port, "to.test", nil).get(t, "/sticky")
			if r.status != http.StatusOK {
				t.Fatalf("client %d: %d %q, want 200 from the live endpoint after a retry", i, r.status, r.body)
			}
		}
		if n := g.stat(t, "cluster.to/stickydead.upstream_rq_retry") - before; n == 0 {
			t.Errorf("no client was sent to the dead endpoint first: the case proved nothing")
		}
	})
	t.Run("no retries", func(t *testing.T) {
		before := be.requests.Load()
		r := c.get(t, "/once", "x-fail-first", "once-1")
		if r.status != http.StatusServiceUnavailable || r.backend() != "be" {
			t.Fatalf("%d %q from %q, want the backend's own 503", r.status, r.body, r.backend())
		}
		if n := be.requests.Load() - before; n != 1 {
			t.Errorf("the backend saw %d attempts, want 1", n)
		}
	})
}
