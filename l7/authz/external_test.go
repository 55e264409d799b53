package authz

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
)

// ext is the external interceptor of e on transport with parameters.
func (e *env) ext(transport string, params map[string]string) chain.Interceptor {
	in := chain.Interceptor{Type: chain.TypeExternal, ID: "todolist", Transport: transport, Parameters: params,
		PathPattern: `^/api/tasks/(?P<task>[^/]+)$`}
	if transport == chain.TransportGRPC {
		in.Address = e.grpcAddr
	} else {
		in.URL = e.restURL
	}
	return in
}

func (e *env) fake(transport string) *fakeInterceptor {
	if transport == chain.TransportGRPC {
		return e.grpcExt
	}
	return e.restExt
}

var transports = []string{chain.TransportGRPC, chain.TransportREST}

func TestCheckExternalAllowWithHeaders(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t)
			if err := e.sessions.Save(context.Background(), "sess1", map[string]string{"user": "u-7"}, time.Hour); err != nil {
				t.Fatal(err)
			}
			value := encode(t, chain.Interceptor{Type: chain.TypeSession},
				e.ext(tr, map[string]string{"mode": "allow", "method": "authorize_read"}))
			a := mustAllow(t, e.check(t, value, req{method: "GET", path: "/api/tasks/t-99?view=full&tag=a&tag=b%20c",
				headers: map[string]string{"cookie": "session=sess1", "accept": "application/json"}}))
			if a.upstream["x-ext-saw-user"] != "u-7" || a.upstream["x-user-id"] != "u-7" {
				t.Errorf("upstream headers %v: want the session's x-user-id and the interceptor's x-ext-saw-user (it ran after the session)", a.upstream)
			}
			if a.downstream["x-ext"] != "allowed" {
				t.Errorf("response headers %v, want x-ext: allowed", a.downstream)
			}
			calls := e.fake(tr).received()
			if len(calls) != 1 {
				t.Fatalf("interceptor called %d times, want 1", len(calls))
			}
			got := calls[0]
			if got.GetId() != "todolist" || got.GetMethod() != "GET" || got.GetPath() != "/api/tasks/t-99" ||
				got.GetHost() != "app.example.com" || got.GetHeaders()["accept"] != "application/json" ||
				got.GetPathParams()["task"] != "t-99" || got.GetParameters()["method"] != "authorize_read" {
				t.Errorf("request contract: %v", got)
			}
			var q []string
			for _, p := range got.GetQuery() {
				q = append(q, p.GetName()+"="+p.GetValue())
			}
			if strings.Join(q, "&") != "view=full&tag=a&tag=b c" {
				t.Errorf("query %q, want view=full&tag=a&tag=b c in order", q)
			}
		})
	}
}

func TestCheckExternalDenyWithFullResponse(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t)
			d := mustDeny(t, e.check(t, encode(t, e.ext(tr, map[string]string{"mode": "deny"})), req{method: "DELETE", path: "/api/tasks/1"}))
			if d.status != 418 || d.headers["x-deny-reason"] != "teapot" || d.body != "no coffee here" {
				t.Errorf("got %d %v %q, want the interceptor's 418, x-deny-reason: teapot and its body", d.status, d.headers, d.body)
			}
			if d.code != codes.PermissionDenied {
				t.Errorf("gRPC status %s, want PermissionDenied", d.code)
			}
		})
	}
}

func TestCheckTimeoutFailsClosedOrOpen(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t)
			hang := e.ext(tr, map[string]string{"mode": "hang"})
			// Long enough that the call reaches the hanging interceptor on a
			// loaded machine (at 50 ms it sometimes timed out while still
			// connecting, and the count below was 1).
			hang.Timeout = chain.Duration(2 * time.Second)
			csp := chain.Interceptor{Type: chain.TypeCSP, Policy: "default-src 'self'"}

			d := mustDeny(t, e.check(t, encode(t, hang, csp), req{}))
			if d.status != 503 || d.code != codes.Unavailable || !strings.Contains(d.msg, "external:todolist") {
				t.Errorf("fail closed: got %d %s %q, want 503 Unavailable naming external:todolist", d.status, d.code, d.msg)
			}

			hang.FailOpen = true
			a := mustAllow(t, e.check(t, encode(t, hang, csp), req{}))
			if a.downstream["content-security-policy"] == "" {
				t.Errorf("fail open: the next interceptor must still run, response headers %v", a.downstream)
			}
			if n := len(e.fake(tr).received()); n != 2 {
				t.Errorf("interceptor called %d times, want 2", n)
			}
		})
	}
}

func TestCheckUnreachableExternalFailsClosed(t *testing.T) {
	e := newEnv(t)
	l := listen(t)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	in := chain.Interceptor{Type: chain.TypeExternal, ID: "gone", Transport: chain.TransportREST, URL: "http://" + addr + "/x"}
	e.declare(Declared{REST: map[string]bool{in.URL: true}})
	if d := mustDeny(t, e.check(t, encode(t, in), req{})); d.status != 503 {
		t.Errorf("status %d, want 503", d.status)
	}
}

func TestCheckOrderIsKept(t *testing.T) {
	e := newEnv(t)
	csrf := chain.Interceptor{Type: chain.TypeCSRF}
	allow := e.ext(chain.TransportGRPC, map[string]string{"mode": "allow"})
	deny := e.ext(chain.TransportREST, map[string]string{"mode": "deny"})

	// CSRF first refuses before the external one is asked.
	if d := mustDeny(t, e.check(t, encode(t, csrf, allow), req{method: "POST"})); d.status != 403 {
		t.Errorf("csrf then external: status %d, want 403", d.status)
	}
	if n := len(e.grpcExt.received()); n != 0 {
		t.Errorf("the external interceptor after a refusing one was called %d times", n)
	}
	// The first external refuses: the second is never called.
	if d := mustDeny(t, e.check(t, encode(t, deny, allow), req{})); d.status != 418 {
		t.Errorf("deny then allow: status %d, want 418", d.status)
	}
	if n := len(e.grpcExt.received()); n != 0 {
		t.Errorf("allow after deny was called %d times", n)
	}
	// Swapped, both run in that order and the second one's answer wins.
	if d := mustDeny(t, e.check(t, encode(t, allow, deny), req{})); d.status != 418 {
		t.Errorf("allow then deny: status %d, want 418", d.status)
	}
	if g, r := len(e.grpcExt.received()), len(e.restExt.received()); g != 1 || r != 2 {
		t.Errorf("calls grpc %d rest %d, want 1 and 2", g, r)
	}
}

var _ interceptorpb.InterceptorServer = (*fakeInterceptor)(nil)
