package authz

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sessionApp is a service whose routes run the built-in interceptors.
// /login (no interceptors) is the login service: it creates the session
// in Redis and sets the cookies. Timeouts are generous: the tests run on a
// loaded machine and a timed-out interceptor answers 503.
const sessionApp = `kind: gateway/service/v1
name: app
group: edge
hosts: [app.example.com]
listeners: [public/web]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
routes:
  - {name: login, prefix: /login, target: main}
  - name: account
    prefix: /account
    target: main
    interceptors:
      - {type: sessionInterceptor, timeout: 5s, headers: {user: x-user-id, roles: x-user-roles, email: x-user-email}}
  - name: lenient
    prefix: /lenient
    target: main
    interceptors:
      - {type: sessionInterceptor, timeout: 5s, failOpen: true}
  - name: portal
    prefix: /portal
    target: main
    interceptors:
      - {type: sessionInterceptor, timeout: 5s, cookie: sid, onMissing: redirect, redirectURL: "/login?next=portal"}
  - name: form
    prefix: /form
    target: main
    interceptors:
      - {type: sessionInterceptor, timeout: 5s}
      - {type: csrfInterceptor, allowedOrigins: ["https://partner.example.com"]}
      - {type: cspInterceptor, policy: "default-src 'self'"}
  - name: secure
    prefix: /secure
    target: main
    interceptors:
      - {type: cspInterceptor, policy: "default-src 'none'"}
      - {type: sessionInterceptor, timeout: 5s}
  - name: report
    prefix: /report
    target: main
    interceptors:
      - {type: cspInterceptor, policy: "default-src 'self'; report-uri /csp", reportOnly: true}
  - {name: public, prefix: /, target: main}
`

// login logs in through Envoy (a route without interceptors) and returns
// the session and CSRF cookies the login service set.
func login(t *testing.T, c *client, query string) (session, csrf string) {
	t.Helper()
	r := c.do(req{method: http.MethodPost, path: "/login?" + query})
	if r.status != http.StatusNoContent {
		t.Fatalf("POST /login?%s: %d %q, want 204", query, r.status, r.body)
	}
	ck := r.cookies()
	if ck["session"] == "" || ck["csrf_token"] == "" {
		t.Fatalf("POST /login set cookies %v, want session and csrf_token", ck)
	}
	return ck["session"], ck["csrf_token"]
}

// TestSessionInterceptorThroughEnvoy: a session cookie issued by the
// login service through Envoy is honoured on the routes that run
// sessionInterceptor; its fields reach the backend as headers, and the
// client's own identity headers never do. With Redis gone the route fails
// closed (503), or, where it says failOpen, passes without any identity.
func TestSessionInterceptorThroughEnvoy(t *testing.T) {
	s := startSite(t, siteOptions{hostIP: "127.0.22.1", files: map[string]string{"app.yaml": sessionApp}})
	c := s.client(t, "")
	ada, _ := login(t, c, "user=ada&roles=admin,ops&email=ada@example.com")
	bob, _ := login(t, c, "user=bob") // no roles, no email
	gone, _ := login(t, c, "user=gone")
	rc := redis.NewClient(&redis.Options{Addr: s.redis.addr, Password: redisPassword})
	defer func() { _ = rc.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rc.Del(ctx, "session:"+gone).Err(); err != nil { // logged out
		t.Fatal(err)
	}

	cases := []struct {
		name     string
		req      req
		status   int
		upstream map[string]string // headers the backend must see ("" = absent)
		location string
	}{
		{name: "no cookie", req: req{path: "/account"}, status: 401},
		{name: "unknown session", req: req{path: "/account", headers: map[string]string{"cookie": "session=nosuchsession"}}, status: 401},
		{name: "id the store never sees", req: req{path: "/account", headers: map[string]string{"cookie": "session=a*b"}}, status: 401},
		{name: "deleted session", req: req{path: "/account", headers: map[string]string{"cookie": "session=" + gone}}, status: 401},
		{name: "forged identity without a session", req: req{path: "/account", headers: map[string]string{"x-user-id": "ada"}}, status: 401},
		{name: "session fields to headers", req: req{path: "/account/profile", headers: map[string]string{"cookie": "theme=dark; session=" + ada}},
			status: 200, upstream: map[string]string{"x-user-id": "ada", "x-user-roles": "admin,ops", "x-user-email": "ada@example.com"}},
		{name: "client identity headers replaced", req: req{path: "/account", headers: map[string]string{"cookie": "session=" + ada,
			"x-user-id": "mallory", "x-user-roles": "root"}},
			status: 200, upstream: map[string]string{"x-user-id": "ada", "x-user-roles": "admin,ops"}},
		{name: "headers of missing fields removed", req: req{path: "/account", headers: map[string]string{"cookie": "session=" + bob,
			"x-user-roles": "admin", "x-user-email": "evil@example.com"}},
			status: 200, upstream: map[string]string{"x-user-id": "bob", "x-user-roles": "", "x-user-email": ""}},
		{name: "redirect without session", req: req{path: "/portal"}, status: 302, location: "/login?next=portal"},
		{name: "own cookie name", req: req{path: "/portal", headers: map[string]string{"cookie": "sid=" + ada}},
			status: 200, upstream: map[string]string{"x-user-id": "ada"}},
		{name: "another cookie name is no session", req: req{path: "/portal", headers: map[string]string{"cookie": "session=" + ada}},
			status: 302, location: "/login?next=portal"},
		{name: "route without the interceptor", req: req{path: "/elsewhere"}, status: 200},
		{name: "Host with the listener's port", req: req{path: "/account", headers: map[string]string{"cookie": "session=" + ada,
			"host": "app.example.com:22080"}}, status: 200, upstream: map[string]string{"x-user-id": "ada", "host": "app.example.com:22080"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := s.client(t, "")
			r := c.do(tc.req)
			if r.status != tc.status {
				t.Fatalf("%s: %d %q, want %d", tc.req.path, r.status, r.body, tc.status)
			}
			if tc.status != 200 {
				if r.backend != nil {
					t.Fatalf("a refused request reached the backend: %+v", r.backend)
				}
				if tc.status == 401 && !strings.Contains(r.body, "no valid session") {
					t.Errorf("401 body %q, want the interceptor's", r.body)
				}
				if got := r.header.Get("Location"); got != tc.location {
					t.Errorf("Location %q, want %q", got, tc.location)
				}
				return
			}
			if r.backend == nil {
				t.Fatalf("200 not from the backend: %q", r.body)
			}
			for h, want := range tc.upstream {
				got, ok := r.backend.Headers[h]
				if want == "" && ok {
					t.Errorf("backend got %s: %q, want it absent", h, got)
				} else if want != "" && got != want {
					t.Errorf("backend got %s: %q, want %q", h, got, want)
				}
			}
		})
	}

	t.Run("Redis gone", func(t *testing.T) {
		s.redis.proc.Stop()
		c := s.client(t, "")
		if r := c.do(req{path: "/account", headers: map[string]string{"cookie": "session=" + ada}}); r.status != 503 || r.body != failedCheck {
			t.Errorf("/account with Redis gone: %d %q, want l7's 503", r.status, r.body)
		}
		r := c.do(req{path: "/lenient", headers: map[string]string{"cookie": "session=" + ada, "x-user-id": "mallory", "x-user-roles": "root"}})
		if r.status != 200 || r.backend == nil {
			t.Fatalf("/lenient (failOpen) with Redis gone: %d %q, want the backend's 200", r.status, r.body)
		}
		for _, h := range []string{"x-user-id", "x-user-roles"} {
			if v, ok := r.backend.Headers[h]; ok {
				t.Errorf("failOpen let the client's %s: %q through", h, v)
			}
		}
	})
}

// TestCSRFAndCSPThroughEnvoy: on a route with session, CSRF and CSP
// interceptors, safe methods pass; unsafe ones need the double-submit
// token (header equal to the cookie) or an origin of their own; a foreign
// origin is refused even with the token; the CSP header is on the
// responses of the routes that set it, report-only where asked, and on a
// refusal of an interceptor after it.
func TestCSRFAndCSPThroughEnvoy(t *testing.T) {
	s := startSite(t, siteOptions{hostIP: "127.0.22.2", files: map[string]string{"app.yaml": sessionApp}})
	sess, token := login(t, s.client(t, ""), "user=ada")
	withCookies := func(h map[string]string, extra string) map[string]string {
		out := map[string]string{"cookie": "session=" + sess + "; csrf_token=" + token + extra}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	const policy = "default-src 'self'"
	cases := []struct {
		name   string
		req    req
		status int
		body   string // in a refusal's body
		csp    string // Content-Security-Policy wanted ("" = absent)
	}{
		{name: "GET needs no token", req: req{path: "/form", headers: withCookies(nil, "")}, status: 200, csp: policy},
		{name: "HEAD needs no token", req: req{method: "HEAD", path: "/form", headers: withCookies(nil, "")}, status: 200, csp: policy},
		{name: "POST without token", req: req{method: "POST", path: "/form", headers: withCookies(nil, "")},
			status: 403, body: "missing or mismatched CSRF token"},
		{name: "POST with a wrong token", req: req{method: "POST", path: "/form", headers: withCookies(map[string]string{"x-csrf-token": "not-" + token}, "")},
			status: 403, body: "missing or mismatched CSRF token"},
		{name: "POST with the header but no cookie", req: req{method: "POST", path: "/form", headers: map[string]string{
			"cookie": "session=" + sess, "x-csrf-token": token}}, status: 403, body: "missing or mismatched CSRF token"},
		{name: "POST with the right token", req: req{method: "POST", path: "/form", headers: withCookies(map[string]string{"x-csrf-token": token}, "")},
			status: 200, csp: policy},
		{name: "DELETE without token", req: req{method: "DELETE", path: "/form/1", headers: withCookies(nil, "")},
			status: 403, body: "missing or mismatched CSRF token"},
		{name: "PUT with the right token", req: req{method: "PUT", path: "/form/1", headers: withCookies(map[string]string{"x-csrf-token": token}, "")},
			status: 200, csp: policy},
		{name: "POST with a foreign Origin and the right token", req: req{method: "POST", path: "/form",
			headers: withCookies(map[string]string{"x-csrf-token": token, "origin": "https://evil.example.net"}, "")},
			status: 403, body: "cross-origin"},
		{name: "POST from its own origin", req: req{method: "POST", path: "/form",
			headers: withCookies(map[string]string{"origin": "http://app.example.com"}, "")}, status: 200, csp: policy},
		{name: "POST from its own origin with the listener's port", req: req{method: "POST", path: "/form",
			headers: withCookies(map[string]string{"host": "app.example.com:22080", "origin": "http://app.example.com:22080"}, "")}, status: 200, csp: policy},
		{name: "POST from the same host on another port", req: req{method: "POST", path: "/form",
			headers: withCookies(map[string]string{"host": "app.example.com:22080", "origin": "http://app.example.com"}, "")}, status: 403, body: "cross-origin"},
		{name: "POST from an allowed origin", req: req{method: "POST", path: "/form",
			headers: withCookies(map[string]string{"origin": "https://partner.example.com"}, "")}, status: 200, csp: policy},
		{name: "POST with a foreign Referer", req: req{method: "POST", path: "/form",
			headers: withCookies(map[string]string{"referer": "https://evil.example.net/page"}, "")}, status: 403, body: "cross-origin"},
		{name: "POST without session", req: req{method: "POST", path: "/form",
			headers: map[string]string{"cookie": "csrf_token=" + token, "x-csrf-token": token}}, status: 401, body: "no valid session"},
		{name: "CSP on an interceptor's refusal after it", req: req{path: "/secure"}, status: 401, body: "no valid session", csp: "default-src 'none'"},
		{name: "CSP before an allowed request", req: req{path: "/secure", headers: withCookies(nil, "")}, status: 200, csp: "default-src 'none'"},
		{name: "no CSP on a route without it", req: req{path: "/elsewhere"}, status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := s.client(t, "")
			r := c.do(tc.req)
			if r.status != tc.status {
				t.Fatalf("%s %s: %d %q, want %d", tc.req.method, tc.req.path, r.status, r.body, tc.status)
			}
			if tc.status == 200 && tc.req.method != "HEAD" && r.backend == nil {
				t.Fatalf("200 not from the backend: %q", r.body)
			}
			if tc.status != 200 && (r.backend != nil || !strings.Contains(r.body, tc.body)) {
				t.Errorf("refusal body %q (backend %v), want the interceptor's %q", r.body, r.backend, tc.body)
			}
			if got := r.header.Get("Content-Security-Policy"); got != tc.csp {
				t.Errorf("Content-Security-Policy %q, want %q", got, tc.csp)
			}
			if got := r.header.Get("Content-Security-Policy-Report-Only"); got != "" {
				t.Errorf("Content-Security-Policy-Report-Only %q on %s", got, tc.req.path)
			}
		})
	}

	t.Run("a large upload waits for the check, none of it lost", func(t *testing.T) {
		// Envoy holds the body while l7 checks: no 413 although the
		// listener's buffer limit is 32 KiB, and every byte upstream.
		const size = 8 << 20
		r := s.client(t, "").do(req{method: "POST", path: "/form/upload", headers: withCookies(map[string]string{"x-csrf-token": token}, ""),
			body: make([]byte, size)})
		if r.status != 200 || r.backend == nil || r.backend.BodyBytes != size {
			t.Fatalf("8 MiB POST: %d %q, want the backend's 200 with %d bytes", r.status, r.body, size)
		}
	})

	t.Run("report only", func(t *testing.T) {
		r := s.client(t, "").do(req{path: "/report"})
		if r.status != 200 || r.header.Get("Content-Security-Policy-Report-Only") != "default-src 'self'; report-uri /csp" ||
			r.header.Get("Content-Security-Policy") != "" {
			t.Fatalf("/report: %d, CSP %q, report-only %q", r.status, r.header.Get("Content-Security-Policy"),
				r.header.Get("Content-Security-Policy-Report-Only"))
		}
	})
}
