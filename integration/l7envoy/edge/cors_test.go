package edge

import (
	"fmt"
	"net/http"
	"testing"
)

// TestCORS: Envoy answers every preflight of a route with a CORS policy
// itself (none reaches the backend): an allowed origin gets the
// Access-Control-* answer, another origin none; simple requests from an
// allowed origin get the response headers, others go through without
// them; a route's own policy replaces the service's; a service without
// CORS on the same listener is left alone (its OPTIONS reach it).
func TestCORS(t *testing.T) {
	const vip, node = "127.0.21.13", "127.0.21.113"
	b := startBackend(t, "app")
	startGateway(t, node, map[string]string{
		"gw.yaml": fmt.Sprintf(`kind: gateway/gateway/v1
name: public
group: edge
listeners: [{name: web, vip: %s, port: 21080, protocol: HTTP}]
`, vip),
		"api.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: api
group: edge
hosts: [api.example.com]
listeners: [public/web]
cors:
  allowOrigins: [https://app.example.com]
  allowMethods: [GET, POST, PUT]
  allowHeaders: [authorization, content-type, x-custom]
  exposeHeaders: [x-request-id]
  allowCredentials: true
  maxAge: 10m
upstreams: [{name: main, endpoints: ["%s"]}]
routes:
  - {name: public, prefix: /public, target: main, cors: {allowOrigins: ["*"], allowMethods: [GET]}}
  - {name: all, prefix: /, target: main}
`, b.addr()),
		"plain.yaml": service("plain", "plain.example.com", "public/web", b),
	})
	c := plainClient(vip + ":21080")
	preflight := func(origin, method, headers string) map[string]string {
		h := map[string]string{"origin": origin, "access-control-request-method": method}
		if headers != "" {
			h["access-control-request-headers"] = headers
		}
		return h
	}
	const app, evil = "https://app.example.com", "https://evil.example.com"
	for _, tc := range []struct {
		name    string
		method  string
		url     string
		header  map[string]string
		backend bool              // the backend answers
		want    map[string]string // response headers; "" means absent
	}{
		{"preflight, allowed origin", http.MethodOptions, "http://api.example.com/orders", preflight(app, "PUT", "x-custom,content-type"), false, map[string]string{
			"access-control-allow-origin": app, "access-control-allow-methods": "GET,POST,PUT",
			"access-control-allow-headers": "authorization,content-type,x-custom", "access-control-allow-credentials": "true",
			"access-control-max-age": "600"}},
		// Envoy still lists methods, credentials and max-age; without
		// allow-origin the browser
		// refuses the call all the same.
		{"preflight, other origin", http.MethodOptions, "http://api.example.com/orders", preflight(evil, "PUT", ""), false, map[string]string{
			"access-control-allow-origin": ""}},
		{"simple request, allowed origin", http.MethodGet, "http://api.example.com/orders", map[string]string{"origin": app}, true, map[string]string{
			"access-control-allow-origin": app, "access-control-allow-credentials": "true", "access-control-expose-headers": "x-request-id"}},
		{"simple request, other origin", http.MethodGet, "http://api.example.com/orders", map[string]string{"origin": evil}, true, map[string]string{
			"access-control-allow-origin": "", "access-control-allow-credentials": ""}},
		{"request without origin", http.MethodPost, "http://api.example.com/orders", nil, true, map[string]string{"access-control-allow-origin": ""}},
		{"route policy: any origin", http.MethodOptions, "http://api.example.com/public/x", preflight(evil, "GET", ""), false, map[string]string{
			"access-control-allow-origin": evil, "access-control-allow-methods": "GET", "access-control-allow-credentials": "", "access-control-max-age": ""}},
		{"service without CORS: preflight reaches the backend", http.MethodOptions, "http://plain.example.com/x", preflight(app, "PUT", ""), true, map[string]string{
			"access-control-allow-origin": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, c, request{Method: tc.method, URL: tc.url, Header: tc.header})
			r.wantStatus(t, 200)
			if (r.Saw != nil) != tc.backend {
				t.Errorf("backend answered: %v, want %v", r.Saw != nil, tc.backend)
			}
			if r.Saw != nil && r.Saw.Method != tc.method {
				t.Errorf("backend saw %s, want %s", r.Saw.Method, tc.method)
			}
			for h, want := range tc.want {
				if got := r.Header.Get(h); got != want {
					t.Errorf("%s: %q, want %q", h, got, want)
				}
			}
		})
	}
}
