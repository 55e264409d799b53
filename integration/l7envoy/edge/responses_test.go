package edge

import (
	"fmt"
	"strings"
	"testing"
)

// responsesGateway: an HTTP and an HTTPS listener on one VIP, with a
// certificate for both sites.
func responsesGateway(vip string) string {
	return fmt.Sprintf(`kind: gateway/gateway/v1
name: gw
group: edge
listeners:
  - {name: web, vip: %[1]s, port: 21080, protocol: HTTP}
  - name: tls
    vip: %[1]s
    port: 21443
    protocol: HTTPS
    certificates: [{name: sites, sni: [site.example.com, other.example.com], certFile: certs/sites.crt, keyFile: certs/sites.key}]
`, vip)
}

// TestResponses: header rules of a service and its routes (request and
// response, set, add, remove), HSTS on the HTTPS listener only, error
// pages for upstream and gateway errors, the service's redirect to HTTPS
// and a route opting out, maintenance and direct responses (also with
// bodies over Envoy's 4 KiB default), the upstream's server header
// hidden; another service on the same listeners gets none of it.
func TestResponses(t *testing.T) {
	const vip, node = "127.0.21.14", "127.0.21.114"
	ca := newCA(t)
	crt, key := ca.issue(t, "site.example.com", "other.example.com")
	b := startBackend(t, "site")
	long := strings.Repeat("0123456789abcdef", 640) // 10 KiB
	startGateway(t, node, map[string]string{
		"certs/sites.crt": crt, "certs/sites.key": key,
		"gw.yaml": responsesGateway(vip),
		"site.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: site
group: edge
hosts: [site.example.com]
listeners: [gw/web, gw/tls]
redirectHTTPS: true
requestHeaders: {set: {x-env: prod}, add: {x-via: tlb}, remove: [x-debug]}
responseHeaders: {set: {x-frame-options: DENY}, remove: [x-powered-by]}
hsts: {maxAge: 3600s, includeSubDomains: true}
errorPages:
  - {statuses: [502, 503], body: "<h1>Back soon</h1>", contentType: text/html}
  - {statuses: [404], body: "not found here"}
upstreams:
  - {name: main, endpoints: ["%[1]s"]}
  - {name: dead, endpoints: ["127.0.21.3:1"]}
routes:
  - name: api
    prefix: /api
    target: main
    redirectHTTPS: false
    requestHeaders: {set: {x-env: api}, add: {x-route: api}}
    responseHeaders: {add: {x-route: api}}
    errorPages: []
  - {name: dead, prefix: /dead, target: dead}
  - {name: down, prefix: /down, target: main, redirectHTTPS: false, maintenance: {enabled: true, retryAfter: 120s}}
  - {name: ping, prefix: /ping, redirectHTTPS: false, directResponse: {status: 200, body: pong, contentType: text/plain}}
  - {name: teapot, prefix: /teapot, directResponse: {status: 418, body: "short and stout"}}
  - {name: long, prefix: /long, redirectHTTPS: false, directResponse: {status: 200, body: "%[2]s"}}
  - {name: longdown, prefix: /longdown, redirectHTTPS: false, target: main, maintenance: {enabled: true, body: "%[2]s"}}
  - name: longpage
    prefix: /longpage
    target: main
    redirectHTTPS: false
    errorPages: [{statuses: [500], body: "%[2]s"}]
  - {name: main, prefix: /, target: main}
`, b.addr(), long),
		"other.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: other
group: edge
hosts: [other.example.com]
listeners: [gw/web, gw/tls]
hsts: {disabled: true}
upstreams: [{name: main, endpoints: ["%s"]}]
routes: [{prefix: /, target: main}]
`, b.addr()),
	})
	https, http := tlsClient(vip+":21443", ca), plainClient(vip+":21080")
	const hstsSite = "max-age=3600; includeSubDomains"

	type want struct {
		status   int
		body     string            // exact, unless "" (not checked)
		backend  bool              // the backend answered
		headers  map[string]string // response headers; "" means absent
		upstream map[string]string // headers the backend saw; "" means absent
	}
	for _, tc := range []struct {
		name  string
		https bool
		rq    request
		want  want
	}{
		{"service header rules", true, request{URL: "https://site.example.com/hello", Header: map[string]string{"x-debug": "1", "x-env": "client"}},
			want{status: 200, backend: true,
				headers:  map[string]string{"x-frame-options": "DENY", "x-powered-by": "", "server": "", "strict-transport-security": hstsSite},
				upstream: map[string]string{"x-env": "prod", "x-via": "tlb", "x-debug": ""}}},
		{"add appends to the client's value", true, request{URL: "https://site.example.com/hello", Header: map[string]string{"x-via": "client"}},
			want{status: 200, backend: true, upstream: map[string]string{"x-via": "client,tlb"}}},
		{"route rules after the service's", true, request{URL: "https://site.example.com/api/x"},
			want{status: 200, backend: true,
				headers:  map[string]string{"x-route": "api", "x-frame-options": "DENY", "strict-transport-security": hstsSite},
				upstream: map[string]string{"x-env": "api", "x-route": "api", "x-via": "tlb"}}},
		{"error page for the gateway's own 503", true, request{URL: "https://site.example.com/dead"},
			want{status: 503, body: "<h1>Back soon</h1>", headers: map[string]string{"content-type": "text/html", "strict-transport-security": hstsSite, "server": ""}}},
		{"error page for the upstream's 503", true, request{URL: "https://site.example.com/status/503"},
			want{status: 503, body: "<h1>Back soon</h1>", headers: map[string]string{"content-type": "text/html"}}},
		{"error page for the upstream's 404", true, request{URL: "https://site.example.com/status/404"},
			want{status: 404, body: "not found here"}},
		{"no page for another status", true, request{URL: "https://site.example.com/status/500"},
			want{status: 500, body: "backend 500"}},
		{"a route without pages keeps the upstream's", true, request{URL: "https://site.example.com/api/status/503"},
			want{status: 503, body: "backend 503"}},
		{"maintenance", true, request{URL: "https://site.example.com/down/x"},
			want{status: 503, body: "Service unavailable: down for maintenance, please retry later.\n",
				headers: map[string]string{"retry-after": "120", "content-type": "text/plain; charset=utf-8", "strict-transport-security": hstsSite}}},
		{"direct response", true, request{URL: "https://site.example.com/ping"},
			want{status: 200, body: "pong", headers: map[string]string{"content-type": "text/plain", "strict-transport-security": hstsSite}}},
		{"direct response of another status", true, request{URL: "https://site.example.com/teapot"},
			want{status: 418, body: "short and stout"}},
		{"10 KiB direct response", true, request{URL: "https://site.example.com/long"}, want{status: 200, body: long}},
		{"10 KiB maintenance body", true, request{URL: "https://site.example.com/longdown"}, want{status: 503, body: long}},
		{"10 KiB error page", true, request{URL: "https://site.example.com/longpage/status/500"}, want{status: 500, body: long}},
		{"another service: none of site's rules", true, request{URL: "https://other.example.com/status/503", Header: map[string]string{"x-debug": "1"}},
			want{status: 503, body: "backend 503",
				headers: map[string]string{"x-frame-options": "", "strict-transport-security": "", "x-powered-by": "backend", "server": ""}}},
		{"another service's answer", true, request{URL: "https://other.example.com/", Header: map[string]string{"x-debug": "1"}},
			want{status: 200, backend: true, upstream: map[string]string{"x-debug": "1", "x-env": "", "x-via": ""}}},
		{"HTTP: the service redirects", false, request{URL: "http://site.example.com/hello?a=1"},
			want{status: 301, headers: map[string]string{"location": "https://site.example.com/hello?a=1", "strict-transport-security": ""}}},
		{"HTTP: a route opting out is served, without HSTS", false, request{URL: "http://site.example.com/api/x"},
			want{status: 200, backend: true, headers: map[string]string{"x-frame-options": "DENY", "strict-transport-security": ""}, upstream: map[string]string{"x-env": "api"}}},
		{"HTTP: direct response without HSTS", false, request{URL: "http://site.example.com/ping"},
			want{status: 200, body: "pong", headers: map[string]string{"strict-transport-security": ""}}},
		{"HTTP: another service is not redirected", false, request{URL: "http://other.example.com/x"},
			want{status: 200, backend: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := http
			if tc.https {
				c = https
			}
			r := send(t, c, tc.rq)
			r.wantStatus(t, tc.want.status)
			if tc.want.body != "" && r.Body != tc.want.body {
				t.Errorf("body %q, want %q", truncate(r.Body, 100), truncate(tc.want.body, 100))
			}
			if (r.Saw != nil) != tc.want.backend {
				t.Errorf("backend answered: %v, want %v", r.Saw != nil, tc.want.backend)
			}
			for h, w := range tc.want.headers {
				if got := strings.Join(r.Header.Values(h), ","); got != w {
					t.Errorf("response %s: %q, want %q", h, got, w)
				}
			}
			for h, w := range tc.want.upstream {
				if got, _ := r.sawHeader(h); got != w {
					t.Errorf("upstream %s: %q, want %q", h, got, w)
				}
			}
		})
	}
}
