package kube

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// TestResponseAnnotations: each response annotation gives the Service the
// DSL's setting; a direct response replaces the route's target.
func TestResponseAnnotations(t *testing.T) {
	ann := map[string]string{
		api.AnnotationL7:                "true",
		api.AnnotationL7RequestHeaders:  `{"set":{"x-env":"prod"},"remove":["x-debug"]}`,
		api.AnnotationL7ResponseHeaders: `{"add":{"x-served-by":"tlb"}}`,
		api.AnnotationL7HSTS:            `{"maxAge":"8760h","includeSubDomains":true,"preload":true}`,
		api.AnnotationL7ErrorPages:      `[{"statuses":[502,503],"body":"<h1>Back soon</h1>","contentType":"text/html"}]`,
		api.AnnotationL7Maintenance:     `{"enabled":true,"retryAfter":"10m"}`,
		api.AnnotationL7RedirectHTTPS:   "true",
	}
	b, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	sr := b.Service.Responses
	if sr == nil || sr.Headers.Request.Set["x-env"] != "prod" || sr.Headers.Request.Remove[0] != "x-debug" || sr.Headers.Response.Add["x-served-by"] != "tlb" {
		t.Fatalf("headers = %+v", sr)
	}
	if h := sr.HSTS; h.MaxAge != 8760*time.Hour || !h.IncludeSubDomains || !h.Preload {
		t.Fatalf("hsts = %+v", h)
	}
	if p := sr.ErrorPages; len(p) != 1 || len(p[0].Statuses) != 2 || p[0].ContentType != "text/html" {
		t.Fatalf("error pages = %+v", p)
	}
	if m := model.EffectiveMaintenance(b.Service, b.Service.Routes[0]); m == nil || m.RetryAfter != 10*time.Minute || m.Status != 503 || !sr.RedirectHTTPS {
		t.Fatalf("maintenance = %+v, redirect %v", m, sr.RedirectHTTPS)
	}

	ann = map[string]string{api.AnnotationL7: "true", api.AnnotationL7DirectResponse: `{"status":200,"body":"ok"}`}
	b, _, ps = BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if r := b.Service.Routes[0]; len(r.Targets) != 0 || model.DirectResponseOf(r).Body != "ok" {
		t.Fatalf("route = %+v", r)
	}
	b, _, _ = BuildService(service("ns", "svc", map[string]string{api.AnnotationL7: "true"}, "203.0.113.1", port("http", 80)), nil, nil, testNow)
	if b.Service.Responses != nil || b.Service.Routes[0].Responses != nil {
		t.Fatal("a Service without response annotations got response settings")
	}
}

// TestResponseAnnotationErrors: unknown keys and bad values are problems
// naming the annotation (and the key at fault); the Service is not served.
func TestResponseAnnotationErrors(t *testing.T) {
	for name, tc := range map[string]struct{ annotation, value, want string }{
		"unknown key":      {api.AnnotationL7HSTS, `{"maxAge":"1h","subdomains":true}`, `unknown field "subdomains"`},
		"trailing data":    {api.AnnotationL7HSTS, `{} {}`, "data after the JSON value"},
		"hsts duration":    {api.AnnotationL7HSTS, `{"maxAge":"soon"}`, "hsts.maxAge: want a positive duration"},
		"preload":          {api.AnnotationL7HSTS, `{"preload":true}`, "hsts.preload: preload needs includeSubDomains"},
		"pseudo header":    {api.AnnotationL7RequestHeaders, `{"set":{":authority":"x"}}`, `requestHeaders.set.:authority: ":authority" is a pseudo-header`},
		"host":             {api.AnnotationL7RequestHeaders, `{"remove":["host"]}`, `requestHeaders.remove[0]: "host" cannot be changed`},
		"hop-by-hop":       {api.AnnotationL7ResponseHeaders, `{"set":{"transfer-encoding":"chunked"}}`, "hop-by-hop"},
		"page status":      {api.AnnotationL7ErrorPages, `[{"statuses":[200],"body":"x"}]`, "errorPages[0].statuses[0]: want an error status"},
		"page not a list":  {api.AnnotationL7ErrorPages, `{"statuses":[503]}`, "cannot unmarshal"},
		"maintenance":      {api.AnnotationL7Maintenance, `{"enabled":true,"status":42}`, "maintenance.status: want 200..599"},
		"retry after":      {api.AnnotationL7Maintenance, `{"enabled":true,"retryAfter":"-1s"}`, "maintenance.retryAfter: want a positive duration"},
		"direct status":    {api.AnnotationL7DirectResponse, `{"status":99}`, "routes[0].directResponse.status: want 200..599"},
		"redirect boolean": {api.AnnotationL7RedirectHTTPS, "yes", "not a boolean"},
	} {
		t.Run(name, func(t *testing.T) {
			ann := map[string]string{api.AnnotationL7: "true", tc.annotation: tc.value}
			_, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
			if len(ps) == 0 || ps[0].Annotation != tc.annotation || !strings.Contains(ps[0].Msg, tc.want) ||
				!strings.Contains(ps[0].Error(), "Service ns/svc: annotation "+tc.annotation) {
				t.Fatalf("problems = %v, want one on %s containing %q", ps, tc.annotation, tc.want)
			}
		})
	}
}

// TestBadResponseAnnotationLeavesOthersServed: Build serves the good
// Service and leaves out only the one with a bad annotation.
func TestBadResponseAnnotationLeavesOthersServed(t *testing.T) {
	good := service("ns", "good", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Maintenance: `{"enabled":true}`}, "203.0.113.1", port("http", 80))
	bad := service("ns", "bad", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Maintenance: `{"enabled":true,"status":1}`}, "203.0.113.2", port("http", 80))
	built, ps := Build([]*corev1.Service{good, bad}, nil, nil, testNow)
	if _, ok := built["ns/good"]; !ok || len(built) != 1 || len(ps) != 1 || ps[0].Name != "bad" {
		t.Fatalf("built %v, problems %v", built, ps)
	}
}

// FuzzResponseAnnotations: the response annotations never panic, and what
// they accept passes the model's checks.
func FuzzResponseAnnotations(f *testing.F) {
	f.Add(`{"set":{"x-a":"b"}}`, `{"maxAge":"1h"}`, `[{"statuses":[503],"body":"x"}]`, `{"enabled":true}`)
	f.Add(`{"remove":["host"]}`, `{"disabled":true}`, `[]`, `{"enabled":false,"status":200}`)
	f.Fuzz(func(t *testing.T, headers, hsts, pages, maintenance string) {
		ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7RequestHeaders: headers, api.AnnotationL7HSTS: hsts,
			api.AnnotationL7ErrorPages: pages, api.AnnotationL7Maintenance: maintenance}
		b, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
		if len(ps) == 0 {
			if err := model.CheckService(b.Service); err != nil {
				t.Fatalf("built an invalid service without a problem: %v", err)
			}
		}
	})
}
