package dsl_test

import (
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
)

const edgeService = `kind: gateway/service/v1
name: s
accessLog: "off"
timeout: "off"
upstreams: [{name: u, endpoints: []}, {name: v2, endpoints: []}]
routes:
  - name: live
    prefix: /live
    target: u
    websocket: true
  - name: main
    prefix: /
    target: u
    timeout: 5s
    canary:
      upstream: v2
      header: {name: x-canary, value: "1"}
      cookie: {name: AB, value: b}
      percent: 10
`

// TestEdgeFields: accessLog, websocket, canary and timeout: off reach the
// model as written; a route's own timeout still wins over the service's.
func TestEdgeFields(t *testing.T) {
	d, err := dsl.Parse("s.yaml", []byte(edgeService))
	if err != nil {
		t.Fatal(err)
	}
	s := d.Service
	if !s.AccessLogOff {
		t.Error("accessLog: off not kept")
	}
	live, main := s.Routes[0], s.Routes[1]
	if !live.WebSocket || main.WebSocket {
		t.Errorf("websocket: live %v, main %v", live.WebSocket, main.WebSocket)
	}
	if live.Timeout >= 0 || main.Timeout.Seconds() != 5 {
		t.Errorf("timeouts: live %v (want off, negative), main %v", live.Timeout, main.Timeout)
	}
	c := main.Canary
	if c == nil || c.Upstream != "v2" || c.Percent != 10 || *c.Header != (model.CanaryMatch{Name: "x-canary", Value: "1"}) ||
		*c.Cookie != (model.CanaryMatch{Name: "AB", Value: "b"}) || live.Canary != nil {
		t.Errorf("canary = %+v", c)
	}
	d, err = dsl.Parse("s.yaml", []byte(strings.Replace(edgeService, "accessLog: \"off\"\n", "", 1)))
	if err != nil || d.Service.AccessLogOff {
		t.Errorf("access log is on by default: %v %v", err, d)
	}
}

// TestTracingBlock: a gateway's tracing block, its default sampling.
func TestTracingBlock(t *testing.T) {
	src := "kind: gateway/gateway/v1\nname: g\ntracing: {otlpEndpoint: \"10.0.0.9:4317\"}\nlisteners:\n  - {name: l, vip: 203.0.113.1, port: 80, protocol: HTTP}\n"
	d, err := dsl.Parse("g.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if tr := d.Gateway.Tracing; tr == nil || tr.Collector != "10.0.0.9:4317" || tr.SamplePercent != model.DefaultSamplePercent {
		t.Errorf("tracing = %+v", tr)
	}
}

func TestEdgeErrors(t *testing.T) {
	svc := "kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: []}, {name: v2, endpoints: []}]\n"
	route := func(extra string) string { return svc + "routes:\n  - {prefix: /, target: u, " + extra + "}\n" }
	gw := func(tracing string) string {
		return "kind: gateway/gateway/v1\nname: g\ntracing: " + tracing + "\nlisteners:\n  - {name: l, vip: 203.0.113.1, port: 80, protocol: HTTP}\n"
	}
	for name, tc := range map[string]struct{ src, want string }{
		"bad accessLog":           {svc + "accessLog: sometimes\nroutes: [{prefix: /, target: u}]\n", "accessLog"},
		"websocket not a bool":    {route("websocket: maybe"), "websocket"},
		"bad timeout":             {route("timeout: \"-1s\""), "routes[0].timeout"},
		"canary unknown upstream": {route("canary: {upstream: v3, percent: 5}"), "routes[0].canary.upstream"},
		"canary is the target":    {route("canary: {upstream: u, percent: 5}"), "routes[0].canary.upstream"},
		"canary asks nothing":     {route("canary: {upstream: v2}"), "routes[0].canary"},
		"percent above 100":       {route("canary: {upstream: v2, percent: 101}"), "routes[0].canary.percent"},
		"negative percent":        {route("canary: {upstream: v2, percent: -1}"), "routes[0].canary.percent"},
		"percent with targets":    {svc + "routes:\n  - {prefix: /, targets: [{upstream: u, weight: 1}, {upstream: v2, weight: 1}], canary: {upstream: v2, percent: 5}}\n", "routes[0].canary.percent"},
		"upper-case header":       {route("canary: {upstream: v2, header: {name: X-Canary, value: \"1\"}}"), "routes[0].canary.header.name"},
		"empty header value":      {route("canary: {upstream: v2, header: {name: x-canary, value: \"\"}}"), "routes[0].canary.header.value"},
		"bad cookie name":         {route("canary: {upstream: v2, cookie: {name: \"a b\", value: x}}"), "routes[0].canary.cookie.name"},
		"cookie value semicolon":  {route("canary: {upstream: v2, cookie: {name: ab, value: \"b;c\"}}"), "routes[0].canary.cookie.value"},
		"canary unknown field":    {route("canary: {upstream: v2, weight: 5}"), "weight"},
		"tracing without port":    {gw("{otlpEndpoint: collector}"), "tracing.otlpEndpoint"},
		"tracing bad host":        {gw("{otlpEndpoint: \"Bad_Host:4317\"}"), "tracing.otlpEndpoint"},
		"tracing sampling":        {gw("{otlpEndpoint: \"10.0.0.9:4317\", samplePercent: 150}"), "tracing.samplePercent"},
		"tracing unknown field":   {gw("{otlpEndpoint: \"10.0.0.9:4317\", insecure: true}"), "insecure"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse("f.yaml", []byte(tc.src))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), "f.yaml: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q lacks the file or %q", err, tc.want)
			}
		})
	}
}
