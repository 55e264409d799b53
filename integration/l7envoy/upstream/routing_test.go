package upstream

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// splitRequests and splitAlpha size the split tests: 1,000 requests, and
// bounds from the exact binomial distribution that a correct split leaves
// with probability below 1e-9 (at 20% that is 127..281 canary answers;
// a split that ignored the weights, 0% or 50%, is far outside).
const (
	splitRequests = 1000
	splitAlpha    = 1e-9
)

// TestCanaryWeightsAndStickiness: routes through the real Envoy send
// requests where the DSL says. A canary cookie (the exact name=value pair,
// wherever it sits in the header) or header goes to the canary, anything
// else to the stable upstream; a 20% canary and a 3:1 split land within
// binomial bounds; a sticky route's cookie, issued by Envoy, keeps a
// client on one endpoint of three, while different clients spread.
func TestCanaryWeightsAndStickiness(t *testing.T) {
	v1, v2 := startBackend(t, "v1", "127.0.23.203", 0), startBackend(t, "v2", "127.0.23.204", 0)
	pool := []*backend{startBackend(t, "p1", "127.0.23.205", 0), startBackend(t, "p2", "127.0.23.206", 0), startBackend(t, "p3", "127.0.23.207", 0)}
	vip := "127.0.23.13"
	port := freePort(t, vip, 23040)
	startGateway(t, setup{hostIP: "127.0.23.102", files: map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: rt\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"shop.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: shop
group: edge
hosts: [shop.test]
listeners: [rt/web]
upstreams:
  - {name: v1, endpoints: [%q]}
  - {name: v2, endpoints: [%q]}
  - {name: heavy, endpoints: [%q]}
  - {name: light, endpoints: [%q]}
  - {name: pool, endpoints: [%q, %q, %q]}
routes:
  - prefix: /canary
    target: v1
    canary: {upstream: v2, cookie: {name: ab, value: b}, header: {name: x-canary, value: "1"}}
  - prefix: /percent
    target: v1
    canary: {upstream: v2, percent: 20}
  - prefix: /weights
    targets: [{upstream: heavy, weight: 3}, {upstream: light, weight: 1}]
  - prefix: /sticky
    target: pool
    sticky: {cookie: shop-session, ttl: 1h, path: /}
`, v1.endpoint(), v2.endpoint(), v1.endpoint(), v2.endpoint(), pool[0].endpoint(), pool[1].endpoint(), pool[2].endpoint()),
	}})
	c := newClient(vip, port, "shop.test", nil)

	t.Run("canary by cookie and header", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			hdr  []string
			want string
		}{
			{"no cookie", nil, "v1"},
			{"canary cookie alone", []string{"cookie", "ab=b"}, "v2"},
			{"canary cookie among others", []string{"cookie", "theme=dark; ab=b; lang=en"}, "v2"},
			{"canary cookie last", []string{"cookie", "theme=dark; ab=b"}, "v2"},
			{"other value", []string{"cookie", "ab=a"}, "v1"},
			{"longer value", []string{"cookie", "ab=bb"}, "v1"},
			{"longer name", []string{"cookie", "xab=b"}, "v1"},
			{"canary header", []string{"x-canary", "1"}, "v2"},
			{"other header value", []string{"x-canary", "2"}, "v1"},
		} {
			got := c.spread(t, 20, "/canary/x", tc.hdr...)
			if got[tc.want] != 20 {
				t.Errorf("%s: 20 requests went to %v, want all to %s", tc.name, got, tc.want)
			}
		}
	})
	t.Run("canary by percentage", func(t *testing.T) {
		lo, hi := binomialBounds(splitRequests, 0.2, splitAlpha)
		got := c.spread(t, splitRequests, "/percent/x")
		t.Logf("20%% canary: %v of %d (bounds %d..%d)", got, splitRequests, lo, hi)
		if got["v1"]+got["v2"] != splitRequests || got["v2"] < lo || got["v2"] > hi {
			t.Errorf("canary got %d of %d, want %d..%d (20%%): %v", got["v2"], splitRequests, lo, hi, got)
		}
	})
	t.Run("weights 3:1", func(t *testing.T) {
		lo, hi := binomialBounds(splitRequests, 0.25, splitAlpha)
		got := c.spread(t, splitRequests, "/weights/x")
		t.Logf("3:1 split: %v of %d (light bounds %d..%d)", got, splitRequests, lo, hi)
		if got["v1"]+got["v2"] != splitRequests || got["v2"] < lo || got["v2"] > hi {
			t.Errorf("light got %d of %d, want %d..%d (1 in 4): %v", got["v2"], splitRequests, lo, hi, got)
		}
	})
	t.Run("cookie stickiness", func(t *testing.T) {
		// Envoy derives the cookie it issues from the client's address
		// and port: one connection, one cookie. Each client here has
		// connections of its own.
		spread := map[string]int{}
		for i := 0; i < 30; i++ {
			c := newClient(vip, port, "shop.test", nil)
			first := c.get(t, "/sticky/x")
			cookie := sessionCookie(first.header, "shop-session")
			if first.status != http.StatusOK || cookie == "" {
				t.Fatalf("first request: %d, Set-Cookie %q; want 200 and a shop-session cookie", first.status, first.header.Values("set-cookie"))
			}
			if i == 0 {
				sc := first.header.Get("set-cookie")
				if !strings.Contains(sc, "Max-Age=3600") || !strings.Contains(sc, "Path=/") {
					t.Errorf("Set-Cookie %q, want Max-Age=3600 (ttl 1h) and Path=/", sc)
				}
			}
			got := c.spread(t, 10, "/sticky/x", "cookie", cookie)
			if got[first.backend()] != 10 {
				t.Fatalf("client %d: first answered by %s, then with its cookie %v; want all 10 on %s", i, first.backend(), got, first.backend())
			}
			spread[first.backend()]++
		}
		t.Logf("30 clients over the pool: %v", spread)
		// Ring hash over 3 endpoints: all 30 clients on one has a
		// probability of about 3 x (1/3)^30.
		if len(spread) < 2 {
			t.Errorf("30 clients all went to %v: stickiness must pin each client, not the pool", spread)
		}
	})
}

// sessionCookie returns "name=value" from the Set-Cookie of name.
func sessionCookie(h http.Header, name string) string {
	for _, sc := range h.Values("set-cookie") {
		kv, _, _ := strings.Cut(sc, ";")
		if strings.HasPrefix(kv, name+"=") {
			return kv
		}
	}
	return ""
}
