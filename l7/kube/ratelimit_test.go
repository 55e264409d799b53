package kube

import (
	"testing"

	"github.com/tlbproject/tlb/api"
)

// TestRateLimitAnnotation: tlb.io/l7-rate-limit gives the Service the
// DSL's limits; unknown keys and bad values are problems, the Service is
// not served.
func TestRateLimitAnnotation(t *testing.T) {
	ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7RateLimit: `{"local":{"requestsPerSecond":0.5,"burst":3}}`}
	b, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	l := b.Service.RateLimit
	if l == nil || l.Local == nil || l.Local.RequestsPerSecond != 0.5 || l.Local.Burst != 3 || l.Global != nil {
		t.Fatalf("rate limit = %+v", l)
	}
	for _, bad := range []string{
		`{"local":{"requestsPerSecond":1,"burst":1,"rps":2}}`, `{"local":{"requestsPerSecond":0,"burst":1}}`,
		`{"local":{"requestsPerSecond":1}}`, `{"global":{}}`, `{"global":{"perRoute":{"requests":1,"unit":"day"}}}`, `nope`,
	} {
		ann[api.AnnotationL7RateLimit] = bad
		_, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
		if len(ps) == 0 {
			t.Errorf("%s accepted", bad)
		}
	}
}
