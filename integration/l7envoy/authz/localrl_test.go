package authz

import (
	"strconv"
	"testing"
)

// limitedApp has local limits per route. A rate of 0.01/s (one token per
// 100 s) means no token comes back while a test runs, however loaded the
// machine, so the burst is exactly what a client gets.
const limitedApp = `kind: gateway/service/v1
name: limited
group: edge
hosts: [app.example.com]
listeners: [public/web]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
rateLimit: {local: {requestsPerSecond: 0.01, burst: 5}}
routes:
  - {name: login, prefix: /login, target: main, rateLimit: {}}
  - {name: tight, prefix: /tight, target: main, rateLimit: {local: {requestsPerSecond: 0.01, burst: 2}}}
  - {name: loose, prefix: /loose, target: main}
  - {name: free, prefix: /free, target: main, rateLimit: {}}
  - name: guarded
    prefix: /guarded
    target: main
    rateLimit: {local: {requestsPerSecond: 0.01, burst: 2}}
    interceptors: [{type: sessionInterceptor, timeout: 5s}]
`

// TestLocalRateLimitThroughEnvoy: each limited route lets a client
// through as many times as its burst, then answers 429 with Retry-After
// (whole seconds until its bucket has a token) and the X-RateLimit
// headers, without reaching the backend; each client address has its own
// bucket, each route its own limit, a route without a limit is never
// refused, and requests an interceptor refuses spend no token (the limit
// runs after ext_authz).
func TestLocalRateLimitThroughEnvoy(t *testing.T) {
	s := startSite(t, siteOptions{hostIP: "127.0.22.5", files: map[string]string{"limited.yaml": limitedApp}})
	const alice, bob = "127.0.22.61", "127.0.22.62"
	sess, _ := login(t, s.client(t, alice), "user=ada")

	cases := []struct {
		name    string
		client  string
		path    string
		headers map[string]string
		allowed int // answered by the backend before the first 429
		limit   int // X-RateLimit-Limit of the 429
		refused int // then this many 429s (0: never refused)
		status  int // when not limited: every answer's status
	}{
		{name: "route limit", client: alice, path: "/tight", allowed: 2, limit: 2, refused: 3},
		{name: "another client has its own bucket", client: bob, path: "/tight/x", allowed: 2, limit: 2, refused: 1},
		{name: "another route has its own limit", client: alice, path: "/loose", allowed: 5, limit: 5, refused: 2},
		{name: "route without a limit", client: alice, path: "/free", allowed: 30},
		{name: "refused by an interceptor: no token spent", client: alice, path: "/guarded", allowed: 5, status: 401},
		{name: "then the limit holds", client: alice, path: "/guarded", headers: map[string]string{"cookie": "session=" + sess},
			allowed: 2, limit: 2, refused: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := s.client(t, tc.client)
			want := tc.status
			if want == 0 {
				want = 200
			}
			for i := range tc.allowed {
				r := c.do(req{path: tc.path, headers: tc.headers})
				if r.status != want {
					t.Fatalf("request %d of %d to %s from %s: %d %q, want %d", i+1, tc.allowed, tc.path, tc.client, r.status, r.body, want)
				}
				if want == 200 && r.backend == nil {
					t.Fatalf("200 not from the backend: %q", r.body)
				}
			}
			before := s.backend.count(tc.path)
			for i := range tc.refused {
				r := c.do(req{path: tc.path, headers: tc.headers})
				if r.status != 429 {
					t.Fatalf("request %d past the burst of %d: %d %q, want 429", i+1, tc.allowed, r.status, r.body)
				}
				ra, err := strconv.Atoi(r.header.Get("Retry-After"))
				if err != nil || ra < 1 || ra > 100 {
					t.Errorf("429 with Retry-After %q, want whole seconds in [1, 100] (one token per 100 s)", r.header.Get("Retry-After"))
				}
				if got := r.header.Get("X-RateLimit-Limit"); got != strconv.Itoa(tc.limit) {
					t.Errorf("X-RateLimit-Limit %q, want %d", got, tc.limit)
				}
				if got := r.header.Get("X-RateLimit-Remaining"); got != "0" {
					t.Errorf("X-RateLimit-Remaining %q, want 0", got)
				}
				if got := r.header.Get("X-Envoy-Ratelimited"); got != "true" {
					t.Errorf("x-envoy-ratelimited %q, want true", got)
				}
			}
			if after := s.backend.count(tc.path); after != before {
				t.Errorf("%d refused requests reached the backend", after-before)
			}
		})
	}
	if n := s.envoyStat(t, "local_rate_limit.http_local_rate_limit.rate_limited"); n != 8 {
		t.Errorf("envoy counted %d locally rate-limited requests, want 8", n)
	}
}
