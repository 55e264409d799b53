package model_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// TestCheckUpstreamHealth: each bad health setting is a rejecting
// Problem naming its field; good ones pass.
func TestCheckUpstreamHealth(t *testing.T) {
	http := func(hc model.HealthCheck) *model.HealthCheck { hc.Protocol = model.HealthHTTP; return &hc }
	tcp := func(hc model.HealthCheck) *model.HealthCheck { hc.Protocol = model.HealthTCP; return &hc }
	all := model.Upstream{
		HealthCheck: http(model.HealthCheck{Path: "/h", Host: "a.example.com", ExpectedStatuses: []model.StatusRange{{Min: 100, Max: 599}},
			Interval: time.Second, Timeout: time.Second, UnhealthyThreshold: 1, HealthyThreshold: 1}),
		OutlierDetection: model.OutlierDetection{Consecutive5xx: 1, MaxEjectionPercent: 100, Interval: time.Second, BaseEjectionTime: time.Second},
		CircuitBreakers:  model.CircuitBreakers{MaxRetries: 1},
		SlowStart:        time.Second,
	}
	for name, tc := range map[string]struct {
		up     model.Upstream
		sticky bool
		field  string // "" when valid
	}{
		"nothing set":                {},
		"everything set":             {up: all},
		"slow start off, sticky":     {up: model.Upstream{SlowStart: -1}, sticky: true},
		"unknown protocol":           {up: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: "udp"}}, field: "upstreams[0].healthCheck"},
		"no path":                    {up: model.Upstream{HealthCheck: http(model.HealthCheck{})}, field: "upstreams[0].healthCheck.http.path"},
		"status 600":                 {up: model.Upstream{HealthCheck: http(model.HealthCheck{Path: "/", ExpectedStatuses: []model.StatusRange{{Min: 200, Max: 600}}})}, field: "upstreams[0].healthCheck.http.expectedStatuses[0]"},
		"path on tcp":                {up: model.Upstream{HealthCheck: tcp(model.HealthCheck{Path: "/"})}, field: "upstreams[0].healthCheck"},
		"host on tcp":                {up: model.Upstream{HealthCheck: tcp(model.HealthCheck{Host: "a.example.com"})}, field: "upstreams[0].healthCheck"},
		"grpc service on http":       {up: model.Upstream{HealthCheck: http(model.HealthCheck{Path: "/", GRPCService: "x"})}, field: "upstreams[0].healthCheck"},
		"negative interval":          {up: model.Upstream{HealthCheck: tcp(model.HealthCheck{Interval: -1})}, field: "upstreams[0].healthCheck.interval"},
		"negative timeout":           {up: model.Upstream{HealthCheck: tcp(model.HealthCheck{Timeout: -1})}, field: "upstreams[0].healthCheck.timeout"},
		"negative ejection interval": {up: model.Upstream{OutlierDetection: model.OutlierDetection{Interval: -1}}, field: "upstreams[0].outlierDetection.interval"},
		"negative ejection time":     {up: model.Upstream{OutlierDetection: model.OutlierDetection{BaseEjectionTime: -1}}, field: "upstreams[0].outlierDetection.baseEjectionTime"},
		"percent over 100":           {up: model.Upstream{OutlierDetection: model.OutlierDetection{MaxEjectionPercent: 101}}, field: "upstreams[0].outlierDetection.maxEjectionPercent"},
		"slow start, sticky":         {up: model.Upstream{SlowStart: time.Second}, sticky: true, field: "upstreams[0].slowStart"},
	} {
		t.Run(name, func(t *testing.T) {
			s := svc("s", "", "/")
			tc.up.Name = "u"
			s.Upstreams = []model.Upstream{tc.up}
			if tc.sticky {
				s.Routes[0].Sticky = &model.CookieSticky{Cookie: "c"}
			}
			err := model.CheckService(s)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), ": "+tc.field+": ") {
				t.Fatalf("error %v does not name %s", err, tc.field)
			}
		})
	}
}
