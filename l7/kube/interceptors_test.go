package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
)

// TestInterceptorsAnnotation: tlb.io/l7-interceptors fills the route's
// chain, in order; a bad value is a problem naming the annotation and the
// field, and the Service is not served.
func TestInterceptorsAnnotation(t *testing.T) {
	ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7Interceptors: `[{"type":"sessionInterceptor","cookie":"sid"},{"type":"csrfInterceptor"}]`}
	b, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	c := b.Service.Routes[0].Interceptors
	if len(c) != 2 || c[0].Type != chain.TypeSession || c[0].Cookie != "sid" || c[1].Type != chain.TypeCSRF {
		t.Fatalf("chain = %+v", c)
	}

	ann[api.AnnotationL7Interceptors] = `[{"type":"sessionInterceptor","timeout":"soon"}]`
	_, _, ps = BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
	if len(ps) == 0 || ps[0].Annotation != api.AnnotationL7Interceptors || !strings.Contains(ps[0].Msg, "interceptors[0].timeout") {
		t.Fatalf("problems = %+v, want one on %s naming interceptors[0].timeout", ps, api.AnnotationL7Interceptors)
	}
}

// TestInterceptorsAnnotationNamesOnlyDeclarations: a Service names
// external interceptors and htpasswd files only by declared names; an
// address, URL or path of its own is a problem on the annotation, and the
// Service is not served (issue 22 item 4).
func TestInterceptorsAnnotationNamesOnlyDeclarations(t *testing.T) {
	for value, want := range map[string]string{
		`[{"type":"external","id":"x","transport":"rest","url":"http://169.254.169.254/latest/meta-data"}]`: "interceptors[0].url: a Kubernetes object may not name where an interceptor is",
		`[{"type":"external","id":"x","transport":"grpc","address":"10.0.0.1:22"}]`:                         "interceptors[0].address:",
		`[{"type":"basicAuth","usersFile":"/dev/zero"}]`:                                                    "interceptors[0].usersFile: a Kubernetes object may not name a file",
		`[{"type":"basicAuth","usersFile":"/etc/shadow","realm":"x"}]`:                                      "interceptors[0].usersFile:",
	} {
		ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7Interceptors: value}
		_, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
		if len(ps) != 1 || ps[0].Annotation != api.AnnotationL7Interceptors || !strings.Contains(ps[0].Msg, want) {
			t.Errorf("%s: problems %+v, want one on %s saying %q", value, ps, api.AnnotationL7Interceptors, want)
		}
	}
	ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7Interceptors: `[{"type":"external","id":"x","endpoint":"audit"},{"type":"basicAuth","users":"ops"}]`}
	b, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
	if len(ps) != 0 || b.Service.Routes[0].Interceptors[0].Endpoint != "audit" || b.Service.Routes[0].Interceptors[1].Users != "ops" {
		t.Errorf("declared names: problems %+v, chain %+v", ps, b.Service.Routes[0].Interceptors)
	}
}

// TestCORSAnnotation: tlb.io/l7-cors gives the Service the DSL's policy;
// unknown keys and bad values are problems, the Service is not served.
func TestCORSAnnotation(t *testing.T) {
	ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7CORS: `{"allowOrigins":["https://app.example.com"],"allowMethods":["GET","POST"],"allowCredentials":true,"maxAge":"10m"}`}
	b, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	c := b.Service.CORS
	if c == nil || c.Origins[0] != "https://app.example.com" || len(c.Methods) != 2 || !c.Credentials || c.MaxAge != 10*time.Minute {
		t.Fatalf("cors = %+v", c)
	}
	for _, bad := range []string{`{"allowOrigin":["*"]}`, `{"allowOrigins":["*"],"allowCredentials":true}`, `{"allowOrigins":["*"],"maxAge":"soon"}`, `nope`} {
		ann[api.AnnotationL7CORS] = bad
		_, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
		if len(ps) == 0 {
			t.Errorf("%s accepted", bad)
		}
	}
}

// FuzzAnnotationsJSON: the JSON annotations never panic, and what they
// accept passes the model's checks or is reported as a problem.
func FuzzAnnotationsJSON(f *testing.F) {
	f.Add(`[{"type":"sessionInterceptor"}]`, `{"allowOrigins":["*"]}`)
	f.Add(`[{"type":"external","id":"x","transport":"grpc","address":"a:1"}]`, `{"allowOrigins":["https://a.example.com"],"maxAge":"1m"}`)
	f.Fuzz(func(t *testing.T, interceptors, cors string) {
		ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7Interceptors: interceptors, api.AnnotationL7CORS: cors}
		b, _, ps := BuildService(service("ns", "svc", ann, "203.0.113.1", port("http", 80)), nil, nil, testNow)
		if len(ps) == 0 {
			if err := model.CheckService(b.Service); err != nil {
				t.Fatalf("built an invalid service without a problem: %v", err)
			}
		}
	})
}
