//go:build ratelimit

package authz

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// globalLimit is the per-route limit of globalApp's routes.
const globalLimit = 6

// globalApp limits three routes to globalLimit requests a minute for all
// clients together (three, so a retry has a fresh count), and one route
// to 4 a minute per client address.
const globalApp = `kind: gateway/service/v1
name: api
group: edge
hosts: [app.example.com]
listeners: [public/web]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
routes:
  - {name: a, prefix: /limited/a, target: main, rateLimit: {global: {perRoute: {requests: 6, unit: minute}}}}
  - {name: b, prefix: /limited/b, target: main, rateLimit: {global: {perRoute: {requests: 6, unit: minute}}}}
  - {name: c, prefix: /limited/c, target: main, rateLimit: {global: {perRoute: {requests: 6, unit: minute}}}}
  - {name: client, prefix: /client, target: main, rateLimit: {global: {perClientIP: {requests: 4, unit: minute}}}}
  - {name: open, prefix: /, target: main}
`

// The counters of Envoy's rate limit filter for the route's cluster.
const (
	rlOK        = "cluster.api/main.ratelimit.ok"
	rlOver      = "cluster.api/main.ratelimit.over_limit"
	rlError     = "cluster.api/main.ratelimit.error"
	rlFailOpen  = "cluster.api/main.ratelimit.failure_mode_allowed"
	rlServiceRq = "cluster.ratelimit.upstream_rq_total"
)

// TestGlobalRateLimitAcrossTwoGateways: two gateways of one group (two
// Envoys, each with its own l7), each calling its own replica of the real
// envoyproxy/ratelimit service, both replicas counting in one Redis with a
// password, their limits served by an l7 from the same DSL. A limit of N
// a minute holds for both gateways together: N requests split between
// them pass (X-RateLimit-Remaining counts down across both), the next one
// through either gets 429 with Retry-After; a per-client limit counts a
// client across both gateways and another client apart; a route without a
// limit never calls the service.
func TestGlobalRateLimitAcrossTwoGateways(t *testing.T) {
	redis := startRedis(t)
	b := startBackend(t, "127.0.22.157", redis.sessions)
	replicas := []string{"127.0.22.31:22081", "127.0.22.32:22081"}
	startRateLimitService(t, redis, writeDSL(t, "127.0.22.107", b.addr, map[string]string{"api.yaml": globalApp}, nil), replicas)
	var gws []*site
	for i, ip := range []string{"127.0.22.7", "127.0.22.8"} {
		gws = append(gws, startSite(t, siteOptions{hostIP: ip, redis: redis, backend: b, files: map[string]string{"api.yaml": globalApp},
			serve: []string{"--ratelimit-address=" + replicas[i]}}))
	}

	t.Run("per route, across both gateways", func(t *testing.T) {
		retrying(t, []string{"/limited/a", "/limited/b", "/limited/c"}, func(path string) (string, []string) {
			return sharedCount(t, gws, path, "", globalLimit)
		})
	})

	t.Run("per client, across both gateways", func(t *testing.T) {
		retrying(t, []string{"127.0.22.71", "127.0.22.72", "127.0.22.73"}, func(src string) (string, []string) {
			inconclusive, failures := sharedCount(t, gws, "/client", src, 4)
			if inconclusive == "" && len(failures) == 0 {
				// Another client has its own count.
				for _, g := range gws {
					if r := g.client(t, "127.0.22.79").do(req{path: "/client"}); r.status != 200 {
						failures = append(failures, fmt.Sprintf("another client through %s: %d, want 200", g, r.status))
					}
				}
			}
			return inconclusive, failures
		})
	})

	t.Run("a route without a limit never calls the service", func(t *testing.T) {
		for _, g := range gws {
			before := g.envoyStat(t, rlServiceRq)
			for range 2 * globalLimit {
				if r := g.client(t, "").do(req{path: "/open"}); r.status != 200 || r.header.Get("X-RateLimit-Limit") != "" {
					t.Fatalf("/open through %s: %d, X-RateLimit-Limit %q", g, r.status, r.header.Get("X-RateLimit-Limit"))
				}
			}
			if after := g.envoyStat(t, rlServiceRq); after != before {
				t.Errorf("%s called the rate limit service %d times for a route without a limit", g, after-before)
			}
		}
	})
}

// retrying runs an attempt with each key in turn until one is conclusive,
// and fails the test with that attempt's failures; all inconclusive fails
// it too.
func retrying(t *testing.T, keys []string, attempt func(key string) (inconclusive string, failures []string)) {
	t.Helper()
	for _, k := range keys {
		why, failures := attempt(k)
		if why != "" {
			t.Logf("attempt with %s inconclusive, trying the next: %s", k, why)
			continue
		}
		for _, f := range failures {
			t.Error(f)
		}
		return
	}
	t.Fatalf("no conclusive attempt out of %d", len(keys))
}

// sharedCount sends limit requests for path from src, alternately through
// each gateway, then one more through each. All in one window of the
// service's per-minute count: limit pass, counting down
// X-RateLimit-Remaining across the gateways, and the next ones get 429
// with Retry-After. The attempt is inconclusive (the reason returned) if
// it crossed into another minute, or if a gateway let a request through
// because the service did not answer within the filter's timeout (fail
// open): either resets or skips the count, and the caller retries with a
// fresh count.
func sharedCount(t *testing.T, gws []*site, path, src string, limit int) (inconclusive string, failures []string) {
	t.Helper()
	waitForWindow(t, 20*time.Second)
	window := time.Now().Unix() / 60
	type counters struct{ ok, over, failed int64 }
	read := func() []counters {
		var out []counters
		for _, g := range gws {
			out = append(out, counters{ok: g.envoyStat(t, rlOK), over: g.envoyStat(t, rlOver), failed: g.envoyStat(t, rlError) + g.envoyStat(t, rlFailOpen)})
		}
		return out
	}
	before := read()
	failf := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }

	for i := range limit {
		g := gws[i%len(gws)]
		r := g.client(t, src).do(req{path: path})
		if r.status != 200 || r.backend == nil {
			failf("request %d of %d through %s: %d %q, want the backend's 200", i+1, limit, g, r.status, r.body)
			continue
		}
		if got, want := r.header.Get("X-RateLimit-Remaining"), strconv.Itoa(limit-1-i); got != want {
			failf("request %d through %s: X-RateLimit-Remaining %q, want %s (one count for both gateways)", i+1, g, got, want)
		}
	}
	for _, g := range gws {
		n := g.backend.count(path)
		r := g.client(t, src).do(req{path: path})
		if r.status != 429 {
			failf("request %d in total, through %s: %d %q, want 429", limit+1, g, r.status, r.body)
			continue
		}
		if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
			failf("429 through %s: Retry-After %q, want whole seconds in [1, 60]", g, r.header.Get("Retry-After"))
		}
		if r.header.Get("X-Envoy-Ratelimited") != "true" || r.header.Get("X-RateLimit-Limit") == "" ||
			!strings.HasPrefix(r.header.Get("X-RateLimit-Limit"), strconv.Itoa(limit)) {
			failf("429 through %s: x-envoy-ratelimited %q, X-RateLimit-Limit %q", g, r.header.Get("X-Envoy-Ratelimited"), r.header.Get("X-RateLimit-Limit"))
		}
		if g.backend.count(path) != n {
			failf("a refused request through %s reached the backend", g)
		}
	}

	after := read()
	for i := range gws {
		if d := after[i].failed - before[i].failed; d != 0 {
			return fmt.Sprintf("%s: %d calls to the service failed or timed out (fail open)", gws[i], d), nil
		}
	}
	if now := time.Now().Unix() / 60; now != window {
		return "the minute's window ended during the attempt", nil
	}
	for i, g := range gws {
		wantOK := int64((limit - i + len(gws) - 1) / len(gws)) // requests i, i+2, ... of limit
		if d := after[i].ok - before[i].ok; d != wantOK {
			failf("%s: the service allowed %d of its requests, want %d", g, d, wantOK)
		}
		if d := after[i].over - before[i].over; d != 1 {
			failf("%s: the service refused %d of its requests, want 1", g, d)
		}
	}
	return "", failures
}

// waitForWindow waits, if less than room is left of the current minute,
// until the next minute starts: the service counts per-minute limits in
// windows aligned to the clock.
func waitForWindow(t *testing.T, room time.Duration) {
	now := time.Now()
	end := now.Truncate(time.Minute).Add(time.Minute)
	if end.Sub(now) < room {
		t.Logf("waiting %s for the next minute's window", end.Sub(now).Round(time.Millisecond))
		time.Sleep(end.Sub(now) + 100*time.Millisecond)
	}
}
