package upstream

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/tlbproject/tlb/internal/poll"
)

// TestActiveHealthCheck: an endpoint that starts failing its health
// check stops getting requests once Envoy has seen unhealthyThreshold
// failed checks (configured: every 1s, unhealthy after 2, so about 2s;
// the test waits on the condition and reports the time), its own request
// counter then stays still while its checks go on, and it gets requests
// again once it passes a check. Outlier detection is off on this
// upstream and the endpoint answers every request 200, so only the
// active check can have taken it out.
func TestActiveHealthCheck(t *testing.T) {
	h1, h2 := startBackend(t, "h1", "127.0.23.208", 0), startBackend(t, "h2", "127.0.23.209", 0)
	vip := "127.0.23.14"
	port := freePort(t, vip, 23050)
	g := startGateway(t, setup{hostIP: "127.0.23.103", files: map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: hc\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"app.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: app
group: edge
hosts: [app.test]
listeners: [hc/web]
upstreams:
  - name: main
    endpoints: [%q, %q]
    healthCheck: {http: {path: /healthz}, interval: 1s, timeout: 1s, unhealthyThreshold: 2, healthyThreshold: 1}
    outlierDetection: {disabled: true}
    slowStart: "off"
routes:
  - {prefix: /, target: main}
`, h1.endpoint(), h2.endpoint()),
	}})
	c := newClient(vip, port, "app.test", nil)
	const membership = "cluster.app/main.membership_healthy"

	// New endpoints count only after their first check.
	poll.Explained(t, time.Minute, "both endpoints serve", func() (bool, string) {
		got := c.spread(t, 20, "/x")
		return got["h1"] > 0 && got["h2"] > 0, fmt.Sprint(got)
	})
	if h1.checks.Load() == 0 || h2.checks.Load() == 0 {
		t.Fatalf("checks so far: h1 %d, h2 %d; want both checked", h1.checks.Load(), h2.checks.Load())
	}

	h1.health.Store(http.StatusServiceUnavailable)
	failed := time.Now()
	poll.Explained(t, time.Minute, "h1 gets no new requests", func() (bool, string) {
		before := h1.requests.Load()
		got := c.spread(t, 20, "/x")
		st, _ := g.Stats(context.Background(), "cluster.app/main.(health_check|membership)")
		return h1.requests.Load() == before, fmt.Sprint(got, " checks ", h1.checks.Load(), " ", st)
	})
	t.Logf("h1 out of rotation %s after its check began failing (configured: 1s interval x 2)", time.Since(failed).Round(100*time.Millisecond))
	if v := g.stat(t, membership); v != 1 {
		t.Errorf("%s = %d, want 1", membership, v)
	}
	before, checks := h1.requests.Load(), h1.checks.Load()
	if got := c.spread(t, 100, "/x"); got["h2"] != 100 {
		t.Errorf("after h1 failed its checks, 100 requests went to %v, want all on h2", got)
	}
	if n := h1.requests.Load() - before; n != 0 {
		t.Errorf("h1 served %d more requests while failing its check", n)
	}
	poll.Until(t, time.Minute, "Envoy keeps checking h1", func() bool { return h1.checks.Load() > checks })
	if v := g.stat(t, "cluster.app/main.health_check.failure"); v < 2 {
		t.Errorf("health_check.failure = %d, want >= 2", v)
	}

	h1.health.Store(http.StatusOK)
	back := time.Now()
	poll.Explained(t, time.Minute, "h1 serves again", func() (bool, string) {
		got := c.spread(t, 20, "/x")
		return got["h1"] > 0, fmt.Sprint(got)
	})
	t.Logf("h1 back %s after its check passed again (configured: healthy after 1)", time.Since(back).Round(100*time.Millisecond))
	if v := g.stat(t, membership); v != 2 {
		t.Errorf("%s = %d, want 2", membership, v)
	}
}

// TestOutlierDetection: passive ejection as docs/l7.md ("Backend
// health") documents it. An endpoint answering 500 is ejected after
// consecutive5xx (3) answers where that is set, and then gets no request;
// with the defaults, 503s (gateway failures) eject after 5, while 500s
// alone eject nothing.
func TestOutlierDetection(t *testing.T) {
	b500, b503, b500kept := startBackend(t, "b500", "127.0.23.210", 0), startBackend(t, "b503", "127.0.23.211", 0), startBackend(t, "b500kept", "127.0.23.212", 0)
	good := startBackend(t, "good", "127.0.23.213", 0)
	b500.fail.Store(http.StatusInternalServerError)
	b503.fail.Store(http.StatusServiceUnavailable)
	b500kept.fail.Store(http.StatusInternalServerError)
	vip := "127.0.23.15"
	port := freePort(t, vip, 23060)
	g := startGateway(t, setup{hostIP: "127.0.23.104", files: map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: od\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"app.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: od
group: edge
hosts: [od.test]
listeners: [od/web]
upstreams:
  - name: strict
    endpoints: [%q, %q]
    outlierDetection: {consecutive5xx: 3, interval: 1s, baseEjectionTime: 5m}
    slowStart: "off"
  - name: gateway
    endpoints: [%q, %q]
    slowStart: "off"
  - name: kept
    endpoints: [%q, %q]
    slowStart: "off"
routes:
  - {prefix: /strict, target: strict}
  - {prefix: /gateway, target: gateway}
  - {prefix: /kept, target: kept}
`, b500.endpoint(), good.endpoint(), b503.endpoint(), good.endpoint(), b500kept.endpoint(), good.endpoint()),
	}})
	c := newClient(vip, port, "od.test", nil)

	for _, tc := range []struct {
		name, path, cluster, counter string
		bad                          *backend
		after                        int64
	}{
		{"500s eject after consecutive5xx", "/strict", "od/strict", "ejections_enforced_consecutive_5xx", b500, 3},
		{"503s eject after the default 5 gateway failures", "/gateway", "od/gateway", "ejections_enforced_consecutive_gateway_failure", b503, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stat := "cluster." + tc.cluster + ".outlier_detection." + tc.counter
			poll.Explained(t, time.Minute, stat+" reaches 1", func() (bool, string) {
				for i := 0; i < 10; i++ {
					c.get(t, tc.path)
				}
				return g.stat(t, stat) == 1, fmt.Sprintf("%s answered %d requests", tc.bad.name, tc.bad.requests.Load())
			})
			// The ejection is decided on Envoy's main thread, so a worker
			// may send one more request before it learns of it.
			n := tc.bad.requests.Load()
			if n < tc.after || n > tc.after+2 {
				t.Errorf("%s was ejected after %d requests, want %d (consecutive errors configured)", tc.bad.name, n, tc.after)
			}
			got := c.spread(t, 50, tc.path)
			if got["good"] != 50 || tc.bad.requests.Load() != n {
				t.Errorf("after the ejection 50 requests went to %v (%s served %d more), want all on good", got, tc.bad.name, tc.bad.requests.Load()-n)
			}
			if v := g.stat(t, "cluster."+tc.cluster+".outlier_detection.ejections_active"); v != 1 {
				t.Errorf("ejections_active = %d, want 1", v)
			}
		})
	}
	t.Run("500s alone do not eject by default", func(t *testing.T) {
		for i := 0; i < 40; i++ {
			c.get(t, "/kept")
		}
		if n := b500kept.requests.Load(); n != 20 {
			t.Errorf("b500kept answered %d of 40 requests (round robin over 2), want 20: it must stay in rotation", n)
		}
		if v := g.stat(t, "cluster.od/kept.outlier_detection.ejections_enforced_total"); v != 0 {
			t.Errorf("ejections_enforced_total = %d, want 0", v)
		}
	})
}
