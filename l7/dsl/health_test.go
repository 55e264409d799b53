package dsl_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
)

// upstreamSrc is a one-upstream service whose upstream has the extra YAML
// lines up (indented under the upstream), and whose one route is sticky
// when sticky is set.
func upstreamSrc(up string, sticky bool) string {
	route := "  - {prefix: /, target: u}\n"
	if sticky {
		route = "  - {prefix: /, target: u, sticky: {cookie: s}}\n"
	}
	return "kind: gateway/service/v1\nname: s\nhosts: [\"*.example.com\", shop.example.com]\nupstreams:\n  - name: u\n    endpoints: [\"198.51.100.1:80\"]\n" +
		up + "routes:\n" + route
}

func TestParseHealth(t *testing.T) {
	for name, tc := range map[string]struct {
		up   string
		want model.Upstream
	}{
		"nothing set: all zero, the translator's defaults": {
			up:   "",
			want: model.Upstream{},
		},
		"http check with every field": {
			up: "    healthCheck:\n      http: {path: /healthz, host: probe.example.com, expectedStatuses: [200-299, 304, \"418\"]}\n" +
				"      interval: 3s\n      timeout: 1s\n      unhealthyThreshold: 4\n      healthyThreshold: 1\n",
			want: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthHTTP, Path: "/healthz", Host: "probe.example.com",
				ExpectedStatuses: []model.StatusRange{{Min: 200, Max: 299}, {Min: 304, Max: 304}, {Min: 418, Max: 418}},
				Interval:         3 * time.Second, Timeout: time.Second, UnhealthyThreshold: 4, HealthyThreshold: 1}},
		},
		"tcp check": {
			up:   "    healthCheck: {tcp: {}}\n",
			want: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthTCP}},
		},
		"grpc check": {
			up:   "    healthCheck: {grpc: {service: shop.v1.Cart, host: cart.internal}}\n",
			want: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthGRPC, GRPCService: "shop.v1.Cart", Host: "cart.internal"}},
		},
		"outlier detection": {
			up: "    outlierDetection: {consecutive5xx: 7, consecutiveGatewayFailure: 3, interval: 5s, baseEjectionTime: 1m, maxEjectionPercent: 34}\n",
			want: model.Upstream{OutlierDetection: model.OutlierDetection{Consecutive5xx: 7, ConsecutiveGatewayFailure: 3,
				Interval: 5 * time.Second, BaseEjectionTime: time.Minute, MaxEjectionPercent: 34}},
		},
		"outlier detection off": {
			up:   "    outlierDetection: {disabled: true}\n",
			want: model.Upstream{OutlierDetection: model.OutlierDetection{Disabled: true}},
		},
		"circuit breakers": {
			up:   "    circuitBreakers: {maxConnections: 100, maxPendingRequests: 10, maxRequests: 200, maxRetries: 5}\n",
			want: model.Upstream{CircuitBreakers: model.CircuitBreakers{MaxConnections: 100, MaxPendingRequests: 10, MaxRequests: 200, MaxRetries: 5}},
		},
		"slow start": {
			up:   "    slowStart: 30s\n",
			want: model.Upstream{SlowStart: 30 * time.Second},
		},
		"slow start off": {
			up:   "    slowStart: \"off\"\n",
			want: model.Upstream{SlowStart: -1},
		},
	} {
		t.Run(name, func(t *testing.T) {
			doc, err := dsl.Parse("s.yaml", []byte(upstreamSrc(tc.up, false)))
			if err != nil {
				t.Fatal(err)
			}
			got := doc.Service.Upstreams[0]
			got.Name, got.Endpoints = "", nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("upstream:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseHealthErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		up     string
		sticky bool
		want   string
	}{
		"two kinds":             {up: "    healthCheck: {tcp: {}, grpc: {}}\n", want: "upstreams[0].healthCheck: set exactly one of http, tcp and grpc"},
		"no kind":               {up: "    healthCheck: {interval: 5s}\n", want: "upstreams[0].healthCheck: set exactly one"},
		"unknown kind":          {up: "    healthCheck: {udp: {}}\n", want: `unknown field "udp"`},
		"unknown http field":    {up: "    healthCheck: {http: {path: /h, method: HEAD}}\n", want: `unknown field "method"`},
		"tcp takes no fields":   {up: "    healthCheck: {tcp: {send: ping}}\n", want: `unknown field "send"`},
		"http without path":     {up: "    healthCheck: {http: {}}\n", want: "upstreams[0].healthCheck.http.path: want a path starting with /"},
		"relative path":         {up: "    healthCheck: {http: {path: healthz}}\n", want: "upstreams[0].healthCheck.http.path"},
		"path with a query":     {up: "    healthCheck: {http: {path: \"/h?x=1\"}}\n", want: "upstreams[0].healthCheck.http.path"},
		"status not a number":   {up: "    healthCheck: {http: {path: /h, expectedStatuses: [2xx]}}\n", want: "upstreams[0].healthCheck.http.expectedStatuses[0]: want a status"},
		"status out of range":   {up: "    healthCheck: {http: {path: /h, expectedStatuses: [200, 99-200]}}\n", want: "upstreams[0].healthCheck.http.expectedStatuses[1]: want a status or range within 100-599"},
		"status range reversed": {up: "    healthCheck: {http: {path: /h, expectedStatuses: [299-200]}}\n", want: "upstreams[0].healthCheck.http.expectedStatuses[0]"},
		"status an object":      {up: "    healthCheck: {http: {path: /h, expectedStatuses: [{a: 1}]}}\n", want: "upstreams[0].healthCheck.http.expectedStatuses[0]"},
		"bad host":              {up: "    healthCheck: {http: {path: /h, host: \"*.example.com\"}}\n", want: "upstreams[0].healthCheck.http.host"},
		"bad grpc host":         {up: "    healthCheck: {grpc: {host: \"a b\"}}\n", want: "upstreams[0].healthCheck.grpc.host"},
		"bad interval":          {up: "    healthCheck: {tcp: {}, interval: soon}\n", want: "upstreams[0].healthCheck.interval: want a positive duration"},
		"interval off":          {up: "    healthCheck: {tcp: {}, interval: \"off\"}\n", want: "upstreams[0].healthCheck: interval and timeout cannot be off"},
		"negative threshold":    {up: "    healthCheck: {tcp: {}, unhealthyThreshold: -1}\n", want: "unhealthyThreshold"},
		"bad ejection time":     {up: "    outlierDetection: {baseEjectionTime: 0s}\n", want: "upstreams[0].outlierDetection.baseEjectionTime: want a positive duration"},
		"outlier interval off":  {up: "    outlierDetection: {interval: \"off\"}\n", want: "set disabled: true"},
		"percent over 100":      {up: "    outlierDetection: {maxEjectionPercent: 101}\n", want: "upstreams[0].outlierDetection.maxEjectionPercent: want 1..100"},
		"unknown outlier field": {up: "    outlierDetection: {successRate: 1}\n", want: `unknown field "successRate"`},
		"unknown breaker":       {up: "    circuitBreakers: {maxConnectionPools: 1}\n", want: `unknown field "maxConnectionPools"`},
		"breaker not a number":  {up: "    circuitBreakers: {maxRequests: lots}\n", want: "maxRequests"},
		"bad slow start":        {up: "    slowStart: 5 parsecs\n", want: "upstreams[0].slowStart: want a positive duration"},
		"slow start and sticky": {up: "    slowStart: 30s\n", sticky: true, want: "upstreams[0].slowStart: a sticky route targets this upstream: ring hash has no slow start"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse("f.yaml", []byte(upstreamSrc(tc.up, tc.sticky)))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "f.yaml") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q lacks the file or %q", err, tc.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
}

// TestSlowStartOffWithSticky: turning slow start off is fine on a ring
// hash upstream; only asking for it is refused.
func TestSlowStartOffWithSticky(t *testing.T) {
	if _, err := dsl.Parse("f.yaml", []byte(upstreamSrc("    slowStart: \"off\"\n", true))); err != nil {
		t.Fatal(err)
	}
}
