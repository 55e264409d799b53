package authz

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// externalApp routes /<transport>/<mode>... through an external
// interceptor of that transport and mode (see interceptor). The service
// names its gRPC interceptor once, as seed 000 does; the REST routes name
// their URL. Timeouts are generous except on the routes that test them.
const externalApp = `kind: gateway/service/v1
name: tasks
group: edge
hosts: [app.example.com]
listeners: [public/web]
interceptor: {address: "$GRPC"}
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
routes:
  - {name: login, prefix: /login, target: main}
  - name: grpc-allow
    pattern: ^/grpc/allow/.*$
    target: main
    interceptors:
      - {type: external, id: todolist, timeout: 5s, parameters: {mode: allow, method: authorize_read}, pathPattern: "^/grpc/allow/(?P<task>[^/]+)$"}
  - name: grpc-deny
    prefix: /grpc/deny
    target: main
    interceptors: [{type: external, id: todolist, timeout: 5s, parameters: {mode: deny}}]
  - name: grpc-hang
    prefix: /grpc/hang
    target: main
    interceptors: [{type: external, id: todolist, timeout: 300ms, parameters: {mode: hang}}]
  - name: grpc-hang-open
    prefix: /grpc/open
    target: main
    interceptors: [{type: external, id: todolist, timeout: 300ms, failOpen: true, parameters: {mode: hang}}]
  - name: grpc-error
    prefix: /grpc/error
    target: main
    interceptors: [{type: external, id: todolist, timeout: 5s, parameters: {mode: error}}]
  - name: grpc-down
    prefix: /grpc/down
    target: main
    interceptors: [{type: external, id: gone, transport: grpc, address: "$DOWN", timeout: 5s, parameters: {mode: allow}}]
  - name: grpc-after-session
    prefix: /grpc/session
    target: main
    interceptors:
      - {type: sessionInterceptor, timeout: 5s}
      - {type: external, id: todolist, timeout: 5s, parameters: {mode: allow}}
  - name: rest-allow
    pattern: ^/rest/allow/.*$
    target: main
    interceptors:
      - {type: external, id: todolist, transport: rest, url: "$REST", timeout: 5s, parameters: {mode: allow, method: authorize_read}, pathPattern: "^/rest/allow/(?P<task>[^/]+)$"}
  - name: rest-deny
    prefix: /rest/deny
    target: main
    interceptors: [{type: external, id: todolist, transport: rest, url: "$REST", timeout: 5s, parameters: {mode: deny}}]
  - name: rest-hang
    prefix: /rest/hang
    target: main
    interceptors: [{type: external, id: todolist, transport: rest, url: "$REST", timeout: 300ms, parameters: {mode: hang}}]
  - name: rest-hang-open
    prefix: /rest/open
    target: main
    interceptors: [{type: external, id: todolist, transport: rest, url: "$REST", timeout: 300ms, failOpen: true, parameters: {mode: hang}}]
  - name: rest-error
    prefix: /rest/error
    target: main
    interceptors: [{type: external, id: todolist, transport: rest, url: "$REST", timeout: 5s, parameters: {mode: error}}]
  - name: rest-down
    prefix: /rest/down
    target: main
    interceptors: [{type: external, id: gone, transport: rest, url: "http://$DOWN/intercept", timeout: 5s, parameters: {mode: allow}}]
  - name: rest-after-session
    prefix: /rest/session
    target: main
    interceptors:
      - {type: sessionInterceptor, timeout: 5s}
      - {type: external, id: todolist, transport: rest, url: "$REST", timeout: 5s, parameters: {mode: allow}}
  - {name: public, prefix: /, target: main}
`

// failedCheck is the body of l7's own 503 when an interceptor fails
// closed: it shows that l7 answered (an interceptor's own timeout), not
// Envoy's ext_authz filter.
const failedCheck = "service unavailable: the authorization check failed\n"

// TestExternalInterceptorsThroughEnvoy: a service's own interceptor over
// gRPC and over REST, through Envoy: allow (its headers reach the backend,
// its response header the client, and it sees the request, the path
// parameters, its parameters and the identity an earlier interceptor
// set), deny (its status, headers and body reach the client, not the
// backend), and fail closed with 503 when it hangs past its timeout,
// fails or cannot be reached, unless the route says failOpen.
func TestExternalInterceptorsThroughEnvoy(t *testing.T) {
	const ip = "127.0.22.3"
	grpcSide, restSide := &interceptor{}, &interceptor{}
	s := startSite(t, siteOptions{hostIP: ip, files: map[string]string{"tasks.yaml": externalApp}, vars: map[string]string{
		"$GRPC": serveGRPC(t, "127.0.22.203", grpcSide),
		"$REST": serveREST(t, "127.0.22.203", restSide),
		"$DOWN": closedAddr(t, "127.0.22.203"),
	}})
	sess, _ := login(t, s.client(t, ""), "user=ada")

	for _, tr := range []struct {
		name string
		side *interceptor
	}{{"grpc", grpcSide}, {"rest", restSide}} {
		cases := []struct {
			name     string
			req      req
			status   int
			body     string            // the response body, for refusals
			upstream map[string]string // headers the backend must see
			header   map[string]string // response headers the client must see
		}{
			{name: "allow", req: req{path: "/" + tr.name + "/allow/t-99?view=full", headers: map[string]string{"x-ext-id": "forged"}}, status: 200,
				upstream: map[string]string{"x-ext-id": "todolist", "x-ext-task": "t-99", "x-ext-method": "authorize_read"},
				header:   map[string]string{"x-ext": "allowed"}},
			{name: "deny with its response", req: req{method: "DELETE", path: "/" + tr.name + "/deny/1"}, status: 418, body: "no coffee here",
				header: map[string]string{"x-deny-reason": "teapot"}},
			{name: "hang past its timeout fails closed", req: req{path: "/" + tr.name + "/hang"}, status: 503, body: failedCheck},
			{name: "failure fails closed", req: req{path: "/" + tr.name + "/error"}, status: 503, body: failedCheck},
			{name: "unreachable fails closed", req: req{path: "/" + tr.name + "/down"}, status: 503, body: failedCheck},
			{name: "failOpen lets a hung one pass", req: req{path: "/" + tr.name + "/open"}, status: 200},
			{name: "after the session interceptor", req: req{path: "/" + tr.name + "/session", headers: map[string]string{"cookie": "session=" + sess}},
				status: 200, upstream: map[string]string{"x-user-id": "ada", "x-ext-saw-user": "ada"}, header: map[string]string{"x-ext": "allowed"}},
		}
		for _, tc := range cases {
			t.Run(tr.name+"/"+tc.name, func(t *testing.T) {
				before := s.backend.count(strings.SplitN(tc.req.path, "?", 2)[0])
				r := s.client(t, "").do(tc.req)
				if r.status != tc.status {
					t.Fatalf("%s %s: %d %q, want %d", tc.req.method, tc.req.path, r.status, r.body, tc.status)
				}
				for h, want := range tc.header {
					if got := r.header.Get(h); got != want {
						t.Errorf("response header %s: %q, want %q", h, got, want)
					}
				}
				if tc.status != 200 {
					if r.body != tc.body {
						t.Errorf("body %q, want %q", r.body, tc.body)
					}
					if after := s.backend.count(strings.SplitN(tc.req.path, "?", 2)[0]); after != before {
						t.Errorf("a refused request reached the backend")
					}
					return
				}
				if r.backend == nil {
					t.Fatalf("200 not from the backend: %q", r.body)
				}
				for h, want := range tc.upstream {
					if got := r.backend.Headers[h]; got != want {
						t.Errorf("backend got %s: %q, want %q", h, got, want)
					}
				}
			})
		}
		t.Run(tr.name+"/what it is sent", func(t *testing.T) {
			r := s.client(t, "").do(req{method: http.MethodPost, path: "/" + tr.name + "/allow/t-7?a=1&b=x%20y", headers: map[string]string{"x-trace": "abc"}})
			if r.status != 200 {
				t.Fatalf("%d %q", r.status, r.body)
			}
			got := tr.side.last()
			var q []string
			for _, p := range got.GetQuery() {
				q = append(q, p.GetName()+"="+p.GetValue())
			}
			if got.GetId() != "todolist" || got.GetMethod() != "POST" || got.GetPath() != "/"+tr.name+"/allow/t-7" ||
				got.GetHost() != appHost || got.GetHeaders()["x-trace"] != "abc" || got.GetPathParams()["task"] != "t-7" ||
				got.GetParameters()["method"] != "authorize_read" || strings.Join(q, "&") != "a=1&b=x y" {
				t.Errorf("the interceptor received %v", got)
			}
		})
	}

	t.Run("no call from a route without it", func(t *testing.T) {
		g, r := grpcSide.count(), restSide.count()
		for i := range 5 {
			if got := s.client(t, "").do(req{path: fmt.Sprintf("/other/%d", i)}); got.status != 200 {
				t.Fatalf("/other: %d", got.status)
			}
		}
		if grpcSide.count() != g || restSide.count() != r {
			t.Errorf("a route without interceptors called them: grpc %d -> %d, rest %d -> %d", g, grpcSide.count(), r, restSide.count())
		}
	})
}
