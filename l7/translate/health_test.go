package translate_test

import (
	"net/netip"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// healthParts is what the health settings put on a cluster.
type healthParts struct {
	checks        []*core.HealthCheck
	outlier       *cluster.OutlierDetection
	breakers      *cluster.CircuitBreakers
	slowStart     time.Duration // 0: no slow start config
	ignoreRemoval bool          // ignore_health_on_host_removal and ignore_new_hosts_until_first_hc
}

func partsOf(c *cluster.Cluster) healthParts {
	p := healthParts{checks: c.GetHealthChecks(), outlier: c.GetOutlierDetection(), breakers: c.GetCircuitBreakers(),
		ignoreRemoval: c.GetIgnoreHealthOnHostRemoval() && c.GetCommonLbConfig().GetIgnoreNewHostsUntilFirstHc()}
	if w := c.GetRoundRobinLbConfig().GetSlowStartConfig().GetSlowStartWindow(); w != nil {
		p.slowStart = w.AsDuration()
	}
	return p
}

func d(v time.Duration) *durationpb.Duration { return durationpb.New(v) }
func n(v uint32) *wrapperspb.UInt32Value     { return wrapperspb.UInt32(v) }

var (
	defaultOutlier = &cluster.OutlierDetection{
		ConsecutiveGatewayFailure: n(5), EnforcingConsecutiveGatewayFailure: n(100), EnforcingConsecutive_5Xx: n(0),
		Interval: d(10 * time.Second), BaseEjectionTime: d(30 * time.Second), MaxEjectionPercent: n(50),
	}
	defaultBreakers = &cluster.CircuitBreakers{Thresholds: []*cluster.CircuitBreakers_Thresholds{{
		MaxConnections: n(10000), MaxPendingRequests: n(1024), MaxRequests: n(10000), TrackRemaining: true,
		RetryBudget: &cluster.CircuitBreakers_Thresholds_RetryBudget{BudgetPercent: &typev3.Percent{Value: 20}, MinRetryConcurrency: n(3)},
	}}}
)

// check is a health check with the default timing and the given checker.
func check(hc *core.HealthCheck) *core.HealthCheck {
	hc.Timeout, hc.Interval, hc.NoTrafficInterval, hc.IntervalJitterPercent = d(2*time.Second), d(5*time.Second), d(5*time.Second), 10
	hc.UnhealthyThreshold, hc.HealthyThreshold = n(3), n(2)
	return hc
}

func httpCheck(h *core.HealthCheck_HttpHealthCheck) *core.HealthCheck {
	return check(&core.HealthCheck{HealthChecker: &core.HealthCheck_HttpHealthCheck_{HttpHealthCheck: h}})
}

func TestClusterHealth(t *testing.T) {
	ep := []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.1:80"), Weight: 1}}
	tests := map[string]struct {
		up     model.Upstream
		hosts  []string
		sticky bool
		want   healthParts
	}{
		"defaults: passive only, no active check": {
			want: healthParts{outlier: defaultOutlier, breakers: defaultBreakers, slowStart: 10 * time.Second},
		},
		"http check, defaults: 200-399, first exact host": {
			up:    model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthHTTP, Path: "/healthz"}},
			hosts: []string{"*.shop.example.com", "shop.example.com", "www.shop.example.com"},
			want: healthParts{outlier: defaultOutlier, breakers: defaultBreakers, slowStart: 10 * time.Second, ignoreRemoval: true,
				checks: []*core.HealthCheck{httpCheck(&core.HealthCheck_HttpHealthCheck{Host: "shop.example.com", Path: "/healthz",
					ExpectedStatuses: []*typev3.Int64Range{{Start: 200, End: 400}}})}},
		},
		"http check on a wildcard-only service: Host is the service name": {
			up:    model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthHTTP, Path: "/"}},
			hosts: []string{"*"},
			want: healthParts{outlier: defaultOutlier, breakers: defaultBreakers, slowStart: 10 * time.Second, ignoreRemoval: true,
				checks: []*core.HealthCheck{httpCheck(&core.HealthCheck_HttpHealthCheck{Host: "svc", Path: "/",
					ExpectedStatuses: []*typev3.Int64Range{{Start: 200, End: 400}}})}},
		},
		"http check to an HTTP/2 upstream speaks HTTP/2, every field set": {
			up: model.Upstream{HTTP2: true, HealthCheck: &model.HealthCheck{Protocol: model.HealthHTTP, Path: "/ready", Host: "probe.internal",
				ExpectedStatuses: []model.StatusRange{{Min: 200, Max: 200}, {Min: 300, Max: 304}},
				Interval:         time.Second, Timeout: 500 * time.Millisecond, UnhealthyThreshold: 1, HealthyThreshold: 5}},
			want: healthParts{outlier: defaultOutlier, breakers: defaultBreakers, slowStart: 10 * time.Second, ignoreRemoval: true,
				checks: []*core.HealthCheck{{
					Timeout: d(500 * time.Millisecond), Interval: d(time.Second), NoTrafficInterval: d(time.Second), IntervalJitterPercent: 10,
					UnhealthyThreshold: n(1), HealthyThreshold: n(5),
					HealthChecker: &core.HealthCheck_HttpHealthCheck_{HttpHealthCheck: &core.HealthCheck_HttpHealthCheck{
						Host: "probe.internal", Path: "/ready", CodecClientType: typev3.CodecClientType_HTTP2,
						ExpectedStatuses: []*typev3.Int64Range{{Start: 200, End: 201}, {Start: 300, End: 305}}}},
				}}},
		},
		"tcp check": {
			up: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthTCP}},
			want: healthParts{outlier: defaultOutlier, breakers: defaultBreakers, slowStart: 10 * time.Second, ignoreRemoval: true,
				checks: []*core.HealthCheck{check(&core.HealthCheck{HealthChecker: &core.HealthCheck_TcpHealthCheck_{TcpHealthCheck: &core.HealthCheck_TcpHealthCheck{}}})}},
		},
		"grpc check": {
			up:    model.Upstream{HTTP2: true, HealthCheck: &model.HealthCheck{Protocol: model.HealthGRPC, GRPCService: "shop.v1.Cart"}},
			hosts: []string{"cart.internal"},
			want: healthParts{outlier: defaultOutlier, breakers: defaultBreakers, slowStart: 10 * time.Second, ignoreRemoval: true,
				checks: []*core.HealthCheck{check(&core.HealthCheck{HealthChecker: &core.HealthCheck_GrpcHealthCheck_{GrpcHealthCheck: &core.HealthCheck_GrpcHealthCheck{
					ServiceName: "shop.v1.Cart", Authority: "cart.internal"}}})}},
		},
		"outlier overrides; 5xx ejection enforced when asked": {
			up: model.Upstream{OutlierDetection: model.OutlierDetection{Consecutive5xx: 3, ConsecutiveGatewayFailure: 2,
				Interval: 5 * time.Second, BaseEjectionTime: time.Minute, MaxEjectionPercent: 100}},
			want: healthParts{breakers: defaultBreakers, slowStart: 10 * time.Second, outlier: &cluster.OutlierDetection{
				Consecutive_5Xx: n(3), EnforcingConsecutive_5Xx: n(100), ConsecutiveGatewayFailure: n(2), EnforcingConsecutiveGatewayFailure: n(100),
				Interval: d(5 * time.Second), BaseEjectionTime: d(time.Minute), MaxEjectionPercent: n(100)}},
		},
		"outlier detection off": {
			up:   model.Upstream{OutlierDetection: model.OutlierDetection{Disabled: true}},
			want: healthParts{breakers: defaultBreakers, slowStart: 10 * time.Second},
		},
		"circuit breakers set; a fixed retry limit replaces the budget": {
			up: model.Upstream{CircuitBreakers: model.CircuitBreakers{MaxConnections: 1, MaxPendingRequests: 2, MaxRequests: 3, MaxRetries: 4}},
			want: healthParts{outlier: defaultOutlier, slowStart: 10 * time.Second, breakers: &cluster.CircuitBreakers{Thresholds: []*cluster.CircuitBreakers_Thresholds{{
				MaxConnections: n(1), MaxPendingRequests: n(2), MaxRequests: n(3), MaxRetries: n(4), TrackRemaining: true}}}},
		},
		"one breaker set, the others default": {
			up: model.Upstream{CircuitBreakers: model.CircuitBreakers{MaxConnections: 500}},
			want: healthParts{outlier: defaultOutlier, slowStart: 10 * time.Second, breakers: func() *cluster.CircuitBreakers {
				b := proto.Clone(defaultBreakers).(*cluster.CircuitBreakers)
				b.Thresholds[0].MaxConnections = n(500)
				return b
			}()},
		},
		"slow start window": {
			up:   model.Upstream{SlowStart: time.Minute},
			want: healthParts{outlier: defaultOutlier, breakers: defaultBreakers, slowStart: time.Minute},
		},
		"slow start off": {
			up:   model.Upstream{SlowStart: -1},
			want: healthParts{outlier: defaultOutlier, breakers: defaultBreakers},
		},
		"sticky: ring hash, no slow start": {
			sticky: true,
			want:   healthParts{outlier: defaultOutlier, breakers: defaultBreakers},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			up := tc.up
			up.Name, up.Endpoints = "u", ep
			route := model.Route{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}
			if tc.sticky {
				route.Sticky = &model.CookieSticky{Cookie: "s"}
			}
			svc := model.Service{Name: "svc", Group: "g", Hosts: tc.hosts, Upstreams: []model.Upstream{up}, Routes: []model.Route{route}}
			if err := model.CheckService(svc); err != nil {
				t.Fatalf("test model is invalid: %v", err)
			}
			r := resolve(t, model.Config{Services: []model.Service{svc}}, model.Options{})
			cs := translate.Clusters(r, "g")
			if len(cs) != 1 {
				t.Fatalf("%d clusters", len(cs))
			}
			c := cs[0]
			if err := validate.Message(c); err != nil {
				t.Fatalf("cluster fails validation: %v", err)
			}
			if c.GetIgnoreHealthOnHostRemoval() != c.GetCommonLbConfig().GetIgnoreNewHostsUntilFirstHc() {
				t.Errorf("ignore_health_on_host_removal and ignore_new_hosts_until_first_hc differ: they go with an active check")
			}
			if tc.sticky != (c.GetLbPolicy() == cluster.Cluster_RING_HASH) {
				t.Errorf("lb_policy %v, sticky %v", c.GetLbPolicy(), tc.sticky)
			}
			got := partsOf(c)
			want := tc.want
			if got.slowStart != want.slowStart || got.ignoreRemoval != want.ignoreRemoval || len(got.checks) != len(want.checks) ||
				!proto.Equal(got.outlier, want.outlier) || !proto.Equal(got.breakers, want.breakers) {
				t.Fatalf("cluster:\n%s\nwant slow start %v, ignore on removal %v, %d checks,\noutlier %v\nbreakers %v",
					prototext.Format(c), want.slowStart, want.ignoreRemoval, len(want.checks), want.outlier, want.breakers)
			}
			for i := range want.checks {
				if !proto.Equal(got.checks[i], want.checks[i]) {
					t.Errorf("health check %d:\n got %v\nwant %v", i, got.checks[i], want.checks[i])
				}
			}
		})
	}
}

// TestOnlyAskedClustersAreChecked: in the example config, active checks
// are on exactly the upstreams that ask, outlier detection on all but the
// one that turns it off.
func TestOnlyAskedClustersAreChecked(t *testing.T) {
	r := loadExample(t)
	checked, ejecting := map[string]bool{}, map[string]bool{}
	for _, g := range translate.Groups(r) {
		for _, c := range translate.Clusters(r, g) {
			if c.GetName() == translate.TracingClusterName("public") {
				continue // the OTLP collector, not an upstream
			}
			checked[c.GetName()] = len(c.GetHealthChecks()) > 0
			ejecting[c.GetName()] = c.GetOutlierDetection() != nil
			if c.GetCircuitBreakers() == nil {
				t.Errorf("%s: no circuit breakers", c.GetName())
			}
		}
	}
	wantChecked := map[string]bool{"shop/v1": true, "payments/db": true, "greeter/stable": true}
	for name, got := range checked {
		if got != wantChecked[name] {
			t.Errorf("%s: active health check %v, want %v", name, got, wantChecked[name])
		}
		if want := name != "payments/db"; ejecting[name] != want {
			t.Errorf("%s: outlier detection %v, want %v", name, ejecting[name], want)
		}
	}
	if len(checked) < 6 {
		t.Fatalf("only %d clusters in the example", len(checked))
	}
}
