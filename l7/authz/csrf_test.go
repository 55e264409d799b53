package authz

import (
	"testing"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

func TestCheckCSRFAcceptsAndRefuses(t *testing.T) {
	e := newEnv(t)
	value := encode(t, chain.Interceptor{Type: chain.TypeCSRF, AllowedOrigins: []string{"https://admin.example.com"}})
	const tok = "csrf_token=Zm9vYmFy"
	for name, tc := range map[string]struct {
		method  string
		headers map[string]string
		allow   bool
	}{
		"GET needs nothing":                        {method: "GET", allow: true},
		"HEAD needs nothing":                       {method: "HEAD", allow: true},
		"POST same origin":                         {method: "POST", headers: map[string]string{"origin": "https://app.example.com"}, allow: true},
		"POST same origin, explicit default port":  {method: "POST", headers: map[string]string{"origin": "https://APP.example.com:443"}, allow: true},
		"PUT allowed origin":                       {method: "PUT", headers: map[string]string{"origin": "https://admin.example.com"}, allow: true},
		"PATCH same-origin referer, no origin":     {method: "PATCH", headers: map[string]string{"referer": "https://app.example.com/page?x=1"}, allow: true},
		"DELETE matching double-submit token":      {method: "DELETE", headers: map[string]string{"cookie": tok, "x-csrf-token": "Zm9vYmFy"}, allow: true},
		"POST origin null falls back to the token": {method: "POST", headers: map[string]string{"origin": "null", "cookie": tok, "x-csrf-token": "Zm9vYmFy"}, allow: true},
		"POST nothing":                             {method: "POST"},
		"POST foreign origin":                      {method: "POST", headers: map[string]string{"origin": "https://evil.example.net"}},
		"POST other scheme is another origin":      {method: "POST", headers: map[string]string{"origin": "http://app.example.com"}},
		"POST foreign origin beats matching token": {method: "POST", headers: map[string]string{"origin": "https://evil.example.net", "cookie": tok, "x-csrf-token": "Zm9vYmFy"}},
		"POST foreign referer":                     {method: "POST", headers: map[string]string{"referer": "https://evil.example.net/x"}},
		"POST token mismatch":                      {method: "POST", headers: map[string]string{"cookie": tok, "x-csrf-token": "Zm9vYmFz"}},
		"POST token header only":                   {method: "POST", headers: map[string]string{"x-csrf-token": "Zm9vYmFy"}},
		"POST token cookie only":                   {method: "POST", headers: map[string]string{"cookie": tok}},
		"POST empty token and empty cookie":        {method: "POST", headers: map[string]string{"cookie": "csrf_token=", "x-csrf-token": ""}},
		"unknown method is unsafe":                 {method: "PROPFIND"},
	} {
		t.Run(name, func(t *testing.T) {
			resp := e.check(t, value, req{method: tc.method, headers: tc.headers})
			if tc.allow {
				mustAllow(t, resp)
				return
			}
			if d := mustDeny(t, resp); d.status != 403 {
				t.Errorf("status %d, want 403", d.status)
			}
		})
	}
}

func TestCheckCSPSetsTheResponseHeader(t *testing.T) {
	e := newEnv(t)
	const policy = "default-src 'self'; img-src https://cdn.example.com"
	a := mustAllow(t, e.check(t, encode(t, chain.Interceptor{Type: chain.TypeCSP, Policy: policy}), req{}))
	if a.downstream["content-security-policy"] != policy {
		t.Errorf("response headers %v, want content-security-policy %q", a.downstream, policy)
	}
	if len(a.upstream) != 0 {
		t.Errorf("CSP must not touch the upstream request: %v", a.upstream)
	}
	a = mustAllow(t, e.check(t, encode(t, chain.Interceptor{Type: chain.TypeCSP, Policy: policy, ReportOnly: true}), req{}))
	if a.downstream["content-security-policy-report-only"] != policy || a.downstream["content-security-policy"] != "" {
		t.Errorf("report-only: response headers %v", a.downstream)
	}
}
