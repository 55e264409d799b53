package ratelimit_test

import (
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlcommon "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	localrl "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/translate/ratelimitenvoy"
	"github.com/tlbproject/tlb/l7/validate"
)

var (
	local  = &ratelimit.Local{RequestsPerSecond: 10, Burst: 20}
	global = &ratelimit.Global{
		PerClientIP: &ratelimit.Quota{Requests: 5, Unit: ratelimit.Second},
		PerRoute:    &ratelimit.Quota{Requests: 1000, Unit: ratelimit.Minute},
	}
)

func forwarding(name string) *route.Route {
	return &route.Route{
		Name:  name,
		Match: &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
		Action: &route.Route_Route{Route: &route.RouteAction{
			ClusterSpecifier: &route.RouteAction_Cluster{Cluster: "web"},
		}},
	}
}

// TestEveryResourcePassesValidateAll checks what a gateway gets: an HTTP
// connection manager with both filters before the router, routes with
// every combination of limits, and the cluster of the service.
func TestEveryResourcePassesValidateAll(t *testing.T) {
	var routes []*route.Route
	for _, l := range []ratelimit.RouteLimits{
		{Route: "none"}, {Route: "local", Local: local}, {Route: "global", Global: global},
		{Route: "both", Local: local, Global: global},
		{Route: "slow", Local: &ratelimit.Local{RequestsPerSecond: 0.5, Burst: 1}},
	} {
		r := forwarding(l.Route)
		ratelimitenvoy.Apply(r, l)
		routes = append(routes, r)
	}
	m := &hcm.HttpConnectionManager{
		StatPrefix: "edge",
		RouteSpecifier: &hcm.HttpConnectionManager_RouteConfig{RouteConfig: &route.RouteConfiguration{
			Name:         "edge",
			VirtualHosts: []*route.VirtualHost{{Name: "web", Domains: []string{"*"}, Routes: routes}},
		}},
		HttpFilters: []*hcm.HttpFilter{
			ratelimitenvoy.LocalFilter(), ratelimitenvoy.GlobalFilter("edge"),
			{Name: wellknown.Router, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: pack(t, &router.Router{})}},
		},
	}
	for name, msg := range map[string]proto.Message{"connection manager": m, "cluster": ratelimitenvoy.Cluster("ratelimit.tlb-system.svc", 8081)} {
		if err := validate.Message(msg); err != nil {
			t.Errorf("%s fails ValidateAll: %v", name, err)
		}
	}
}

func TestLocalFilterIsInertInTheChain(t *testing.T) {
	f := unpackLocal(t, ratelimitenvoy.LocalFilter().GetTypedConfig())
	if f.GetTokenBucket() != nil || f.GetFilterEnabled() != nil || len(f.GetDescriptors()) > 0 || len(f.GetRateLimits()) > 0 {
		t.Errorf("chain-level local filter limits something: %v", f)
	}
}

// TestApplyTouchesOnlyWhatIsAsked: each filter sees a route only when
// that route asks for its limit.
func TestApplyTouchesOnlyWhatIsAsked(t *testing.T) {
	tests := map[string]struct {
		limits          ratelimit.RouteLimits
		wantLocal       bool
		wantDescriptors int
	}{
		"no limits":   {ratelimit.RouteLimits{Route: "r"}, false, 0},
		"local only":  {ratelimit.RouteLimits{Route: "r", Local: local}, true, 0},
		"global only": {ratelimit.RouteLimits{Route: "r", Global: global}, false, 2},
		"per IP only": {ratelimit.RouteLimits{Route: "r", Global: &ratelimit.Global{PerClientIP: global.PerClientIP}}, false, 1},
		"both":        {ratelimit.RouteLimits{Route: "r", Local: local, Global: global}, true, 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := forwarding("r")
			ratelimitenvoy.Apply(r, tc.limits)
			if !tc.wantLocal && tc.wantDescriptors == 0 {
				if !proto.Equal(forwarding("r"), r) {
					t.Errorf("route without limits changed: %v", r)
				}
			}
			_, hasLocal := r.GetTypedPerFilterConfig()[ratelimitenvoy.LocalFilterName]
			if hasLocal != tc.wantLocal || len(r.GetTypedPerFilterConfig()) > 1 {
				t.Errorf("typed_per_filter_config = %v, want local limit %v and nothing else", r.GetTypedPerFilterConfig(), tc.wantLocal)
			}
			if got := len(r.GetRoute().GetRateLimits()); got != tc.wantDescriptors {
				t.Errorf("route has %d rate_limits, want %d", got, tc.wantDescriptors)
			}
		})
	}
}

// TestLocalLimitIsPerClient: one token bucket per client address, from
// the filter's own remote_address action, answered with 429 and
// Retry-After.
func TestLocalLimitIsPerClient(t *testing.T) {
	c := ratelimitenvoy.LocalPerRoute(ratelimit.Local{RequestsPerSecond: 10, Burst: 20})
	bucket := &typev3.TokenBucket{MaxTokens: 20}
	if len(c.GetDescriptors()) != 1 {
		t.Fatalf("descriptors = %v, want one", c.GetDescriptors())
	}
	d := c.GetDescriptors()[0]
	wantEntry := &rlcommon.RateLimitDescriptor_Entry{Key: "remote_address"} // no value: one bucket per address
	if len(d.GetEntries()) != 1 || !proto.Equal(d.GetEntries()[0], wantEntry) {
		t.Errorf("descriptor entries = %v, want only %v", d.GetEntries(), wantEntry)
	}
	if d.GetTokenBucket().GetMaxTokens() != bucket.GetMaxTokens() || d.GetTokenBucket().GetTokensPerFill().GetValue() != 1 ||
		d.GetTokenBucket().GetFillInterval().AsDuration().Milliseconds() != 100 {
		t.Errorf("per-client bucket = %v, want 20 tokens, 1 per 100ms", d.GetTokenBucket())
	}
	if !proto.Equal(c.GetTokenBucket(), d.GetTokenBucket()) {
		t.Errorf("route bucket %v differs from the per-client bucket %v (Envoy wants the descriptor's interval a multiple of it)", c.GetTokenBucket(), d.GetTokenBucket())
	}
	descs, err := envoyDescriptors(c.GetRateLimits(), "192.0.2.7")
	if err != nil || len(descs) != 1 || len(descs[0].GetEntries()) != 1 || descs[0].GetEntries()[0].GetKey() != "remote_address" {
		t.Errorf("filter's own actions give %v (%v), want one remote_address entry", descs, err)
	}
	if c.GetAlwaysConsumeDefaultTokenBucket().GetValue() || c.GetAlwaysConsumeDefaultTokenBucket() == nil {
		t.Error("the route-wide bucket is consumed too: clients would share it")
	}
	if c.GetStatus().GetCode() != typev3.StatusCode_TooManyRequests || !c.GetEnableRetryAfterHeader() {
		t.Errorf("status %v, Retry-After %v; want 429 with Retry-After", c.GetStatus(), c.GetEnableRetryAfterHeader())
	}
	if h := c.GetResponseHeadersToAdd(); len(h) != 1 || h[0].GetHeader().GetKey() != "x-envoy-ratelimited" || h[0].GetHeader().GetValue() != "true" {
		// Envoy 1.40's local filter does not set it itself, whatever its
		// documentation says (integration/l7envoy/authz).
		t.Errorf("response_headers_to_add = %v, want x-envoy-ratelimited: true on a local 429, as the global filter's", h)
	}
	if c.GetFilterEnabled().GetDefaultValue().GetNumerator() != 100 || c.GetFilterEnforced().GetDefaultValue().GetNumerator() != 100 {
		t.Error("per-route limit is not enabled and enforced for every request")
	}
}

// TestGlobalDescriptors: what Envoy sends for a request from one client.
func TestGlobalDescriptors(t *testing.T) {
	got, err := envoyDescriptors(ratelimitenvoy.RouteRateLimits(ratelimit.RouteLimits{Route: "shop/0", Global: global}), "198.51.100.9")
	if err != nil {
		t.Fatal(err)
	}
	want := []*rlcommon.RateLimitDescriptor{
		{Entries: []*rlcommon.RateLimitDescriptor_Entry{{Key: "route", Value: "shop/0"}}},
		{Entries: []*rlcommon.RateLimitDescriptor_Entry{{Key: "route", Value: "shop/0"}, {Key: "remote_address", Value: "198.51.100.9"}}},
	}
	if len(got) != len(want) {
		t.Fatalf("descriptors = %v, want %v", got, want)
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("descriptor %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func pack(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func unpackLocal(t *testing.T, a *anypb.Any) *localrl.LocalRateLimit {
	t.Helper()
	var f localrl.LocalRateLimit
	if err := a.UnmarshalTo(&f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// TestValidationReachesPerRouteConfig is the control for the test above:
// a broken per-route bucket packed in an Any is caught.
func TestValidationReachesPerRouteConfig(t *testing.T) {
	r := forwarding("r")
	ratelimitenvoy.Apply(r, ratelimit.RouteLimits{Route: "r", Local: &ratelimit.Local{Burst: 1}}) // rate 0: no tokens per fill
	if err := validate.Message(r); err == nil {
		t.Fatal("a token bucket adding 0 tokens passed ValidateAll")
	}
}
