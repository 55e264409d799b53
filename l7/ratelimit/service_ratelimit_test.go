//go:build ratelimit

package ratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/translate/ratelimitenvoy"
)

// The routes of group "edge" the tests drive, each its own counters.
var edgeRoutes = []ratelimit.RouteLimits{
	{Route: "shop/0", Global: &ratelimit.Global{PerClientIP: &ratelimit.Quota{Requests: 5, Unit: ratelimit.Minute}}},
	{Route: "search/0", Global: &ratelimit.Global{PerRoute: &ratelimit.Quota{Requests: 4, Unit: ratelimit.Minute}}},
	{Route: "login/0", Global: &ratelimit.Global{
		PerClientIP: &ratelimit.Quota{Requests: 2, Unit: ratelimit.Minute},
		PerRoute:    &ratelimit.Quota{Requests: 3, Unit: ratelimit.Minute},
	}},
	{Route: "api/0", Global: &ratelimit.Global{PerClientIP: &ratelimit.Quota{Requests: 3, Unit: ratelimit.Second}}},
	{Route: "static/0", Local: &ratelimit.Local{RequestsPerSecond: 1, Burst: 1}}, // not in the service's file
}

// fixture is what every test here runs against: one private redis-server
// and two replicas of the real envoyproxy/ratelimit service sharing it,
// each loading the generated files of two groups, "edge" and "other".
type fixture struct {
	dir      runtimeDir
	replicas [2]*service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	bin := serviceBinary(t)
	redis, err := redisproc.Start(context.Background(), t.TempDir(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redis.Stop)
	f := &fixture{dir: newRuntimeDir(t)}
	f.dir.write(t, serviceConfig(t, "edge", edgeRoutes))
	f.dir.write(t, serviceConfig(t, "other", edgeRoutes[:1]))
	for i := range f.replicas {
		f.replicas[i] = startService(t, bin, redis.Addr, f.dir.env())
	}
	return f
}

func serviceConfig(t *testing.T, domain string, routes []ratelimit.RouteLimits) ratelimit.ServiceConfig {
	t.Helper()
	cfg, err := ratelimit.Service(domain, routes)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// gateway is one Envoy of a group: it calls one replica with the domain of
// its group and the descriptors the route's actions give for the client.
type gateway struct {
	t      *testing.T
	domain string
	svc    *service
}

func (g gateway) call(l ratelimit.RouteLimits, clientIP string) *rlsv3.RateLimitResponse {
	g.t.Helper()
	descs, err := envoyDescriptors(ratelimitenvoy.RouteRateLimits(l), clientIP)
	if err != nil {
		g.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := g.svc.client.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: g.domain, Descriptors: descs, HitsAddend: 1})
	if err != nil {
		g.t.Fatalf("ShouldRateLimit(%s, %s from %s): %v", g.domain, l.Route, clientIP, err)
	}
	return resp
}

// expect checks the overall code of n calls in a row.
func (g gateway) expect(l ratelimit.RouteLimits, clientIP string, n int, want rlsv3.RateLimitResponse_Code) *rlsv3.RateLimitResponse {
	g.t.Helper()
	var resp *rlsv3.RateLimitResponse
	for i := range n {
		resp = g.call(l, clientIP)
		if resp.GetOverallCode() != want {
			g.t.Fatalf("%s from %s, call %d of %d: %v, want %v (%v)", l.Route, clientIP, i+1, n, resp.GetOverallCode(), want, resp.GetStatuses())
		}
	}
	return resp
}

// clearOfWindowEnd waits, if the current fixed window of u ends within
// margin, for the next one, so a sequence of calls counts in one window.
func clearOfWindowEnd(u time.Duration, margin time.Duration) {
	now := time.Now()
	if left := now.Truncate(u).Add(u).Sub(now); left < margin {
		time.Sleep(left + 10*time.Millisecond)
	}
}

func TestRealService(t *testing.T) {
	f := newFixture(t)
	edge1 := gateway{t: t, domain: "edge", svc: f.replicas[0]}
	edge2 := gateway{t: t, domain: "edge", svc: f.replicas[1]}
	shop, search, login, api := edgeRoutes[0], edgeRoutes[1], edgeRoutes[2], edgeRoutes[3]
	clearOfWindowEnd(time.Minute, 3*time.Second)

	t.Run("per client IP: N allowed, then over the limit with the time to reset", func(t *testing.T) {
		edge1.t = t
		edge1.expect(shop, "192.0.2.1", 5, rlsv3.RateLimitResponse_OK)
		resp := edge1.expect(shop, "192.0.2.1", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
		st := resp.GetStatuses()[0]
		if st.GetCurrentLimit().GetRequestsPerUnit() != 5 || st.GetCurrentLimit().GetUnit() != rlsv3.RateLimitResponse_RateLimit_MINUTE {
			t.Errorf("current limit %v, want 5 per minute", st.GetCurrentLimit())
		}
		// Envoy's Retry-After and X-RateLimit-Reset come from this field.
		if d := st.GetDurationUntilReset().AsDuration(); d <= 0 || d > time.Minute {
			t.Errorf("duration_until_reset = %s, want within the minute", d)
		}
	})
	t.Run("each client IP has its own count", func(t *testing.T) {
		edge1.t = t
		edge1.expect(shop, "192.0.2.2", 5, rlsv3.RateLimitResponse_OK)
		edge1.expect(shop, "192.0.2.2", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
		edge1.expect(shop, "2001:db8::2", 5, rlsv3.RateLimitResponse_OK)
	})
	t.Run("two gateways of a group share the count", func(t *testing.T) {
		edge1.t, edge2.t = t, t
		for range 2 {
			edge1.expect(shop, "192.0.2.3", 1, rlsv3.RateLimitResponse_OK)
			edge2.expect(shop, "192.0.2.3", 1, rlsv3.RateLimitResponse_OK)
		}
		edge2.expect(shop, "192.0.2.3", 1, rlsv3.RateLimitResponse_OK)
		edge1.expect(shop, "192.0.2.3", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
		edge2.expect(shop, "192.0.2.3", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
	})
	t.Run("another group does not share it", func(t *testing.T) {
		other := gateway{t: t, domain: "other", svc: f.replicas[1]}
		other.expect(shop, "192.0.2.1", 5, rlsv3.RateLimitResponse_OK) // 192.0.2.1 is over the limit in edge
		other.expect(shop, "192.0.2.1", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
	})
	t.Run("per route: every client counts", func(t *testing.T) {
		edge1.t = t
		for i := range 4 {
			edge1.expect(search, fmt.Sprintf("198.51.100.%d", i+1), 1, rlsv3.RateLimitResponse_OK)
		}
		edge1.expect(search, "198.51.100.99", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
	})
	t.Run("per route and per client IP on one route", func(t *testing.T) {
		edge1.t = t
		edge1.expect(login, "203.0.113.1", 2, rlsv3.RateLimitResponse_OK)
		resp := edge1.expect(login, "203.0.113.1", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
		if c := codes(resp); c != "OK,OVER_LIMIT" { // [route], [route, remote_address]
			t.Errorf("statuses %s, want the client's own limit over", c)
		}
		edge1.expect(login, "203.0.113.2", 1, rlsv3.RateLimitResponse_OVER_LIMIT) // the route's 3 are spent (the refused call counts too)
		if c := codes(edge1.call(login, "203.0.113.3")); c != "OVER_LIMIT,OK" {
			t.Errorf("statuses %s, want the route's limit over and the new client's own not", c)
		}
	})
	t.Run("the count resets after the unit", func(t *testing.T) {
		edge1.t, edge2.t = t, t
		clearOfWindowEnd(time.Second, 500*time.Millisecond)
		edge1.expect(api, "192.0.2.50", 3, rlsv3.RateLimitResponse_OK)
		resp := edge2.expect(api, "192.0.2.50", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
		reset := resp.GetStatuses()[0].GetDurationUntilReset().AsDuration()
		if reset != time.Second { // whole seconds: Retry-After: 1
			t.Errorf("duration_until_reset = %s, want 1s", reset)
		}
		over := time.Now()
		for edge1.call(api, "192.0.2.50").GetOverallCode() != rlsv3.RateLimitResponse_OK {
			if time.Since(over) > 2*time.Second {
				t.Fatal("still over the limit 2s after it was hit, with a per-second limit")
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("allowed again %s after the limit was hit", time.Since(over).Round(time.Millisecond))
	})
}

// TestRealServiceReloadsItsFile: a new file in the runtime directory
// reaches both replicas without a restart.
func TestRealServiceReloadsItsFile(t *testing.T) {
	f := newFixture(t)
	added := ratelimit.RouteLimits{Route: "new/0", Global: &ratelimit.Global{PerClientIP: &ratelimit.Quota{Requests: 1, Unit: ratelimit.Hour}}}
	for i, svc := range f.replicas {
		gateway{t: t, domain: "edge", svc: svc}.expect(added, fmt.Sprintf("192.0.2.%d", 100+i), 3, rlsv3.RateLimitResponse_OK) // unknown: unlimited
	}
	f.dir.write(t, serviceConfig(t, "edge", append(append([]ratelimit.RouteLimits{}, edgeRoutes...), added)))
	for i, svc := range f.replicas {
		g := gateway{t: t, domain: "edge", svc: svc}
		ip := fmt.Sprintf("192.0.2.%d", 110+i)
		deadline := time.Now().Add(10 * time.Second)
		for g.call(added, ip).GetOverallCode() != rlsv3.RateLimitResponse_OVER_LIMIT {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d does not apply the rewritten file after 10s", i)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func codes(r *rlsv3.RateLimitResponse) string {
	var s string
	for i, st := range r.GetStatuses() {
		if i > 0 {
			s += ","
		}
		s += st.GetCode().String()
	}
	return s
}

// TestRealServiceFollowsAConfigMapUpdate: in Kubernetes the files are a
// mounted ConfigMap, which the kubelet updates by switching a symlink, with
// the previous and next versions in hidden directories beside the files.
// The service must read only the visible files (RUNTIME_IGNOREDOTFILES;
// otherwise it would load each domain twice and refuse the configuration)
// and must see the switch.
func TestRealServiceFollowsAConfigMapUpdate(t *testing.T) {
	bin := serviceBinary(t)
	redis, err := redisproc.Start(context.Background(), t.TempDir(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redis.Stop)
	dir := newRuntimeDir(t)
	shop := edgeRoutes[0]
	dir.swapLikeKubelet(t, 1, serviceConfig(t, "edge", []ratelimit.RouteLimits{shop}))
	g := gateway{t: t, domain: "edge", svc: startService(t, bin, redis.Addr, dir.env())}
	clearOfWindowEnd(time.Minute, 3*time.Second)
	g.expect(shop, "192.0.2.1", 5, rlsv3.RateLimitResponse_OK)
	g.expect(shop, "192.0.2.1", 1, rlsv3.RateLimitResponse_OVER_LIMIT)

	added := ratelimit.RouteLimits{Route: "new/0", Global: &ratelimit.Global{PerClientIP: &ratelimit.Quota{Requests: 1, Unit: ratelimit.Hour}}}
	g.expect(added, "192.0.2.2", 2, rlsv3.RateLimitResponse_OK) // not configured yet: unlimited
	dir.swapLikeKubelet(t, 2, serviceConfig(t, "edge", []ratelimit.RouteLimits{shop, added}))
	deadline := time.Now().Add(10 * time.Second)
	for g.call(added, "192.0.2.3").GetOverallCode() != rlsv3.RateLimitResponse_OVER_LIMIT {
		if time.Now().After(deadline) {
			t.Fatal("the service does not apply the switched ConfigMap after 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	g.expect(shop, "192.0.2.1", 1, rlsv3.RateLimitResponse_OVER_LIMIT) // the reload kept the counts (they are in Redis)
}
