package authz

import (
	"context"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

// TestCheckCSRFAcceptsAndRefuses: unsafe requests pass on their own or an
// allowed origin; without one, only with the token of their own session
// (header and cookie both equal to the session's csrf field). Origin
// "null" is refused whatever token comes with it (issue 22: it fell back
// to a token, and the token was anyone's whose header matched its cookie).
func TestCheckCSRFAcceptsAndRefuses(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.sessions.Save(ctx, "ada-session", map[string]string{"user": "ada", "csrf": "Zm9vYmFy"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := e.sessions.Save(ctx, "eve-session", map[string]string{"user": "eve", "csrf": "ZXZlZXZl"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := e.sessions.Save(ctx, "old-session", map[string]string{"user": "old"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	value := encode(t, chain.Interceptor{Type: chain.TypeSession},
		chain.Interceptor{Type: chain.TypeCSRF, AllowedOrigins: []string{"https://admin.example.com"}})
	const ada = "session=ada-session; csrf_token=Zm9vYmFy"
	for name, tc := range map[string]struct {
		method  string
		headers map[string]string
		allow   bool
	}{
		"GET needs nothing":                       {method: "GET", headers: map[string]string{"cookie": ada}, allow: true},
		"HEAD needs nothing":                      {method: "HEAD", headers: map[string]string{"cookie": ada}, allow: true},
		"POST same origin":                        {method: "POST", headers: map[string]string{"cookie": ada, "origin": "https://app.example.com"}, allow: true},
		"POST same origin, explicit default port": {method: "POST", headers: map[string]string{"cookie": ada, "origin": "https://APP.example.com:443"}, allow: true},
		"PUT allowed origin":                      {method: "PUT", headers: map[string]string{"cookie": ada, "origin": "https://admin.example.com"}, allow: true},
		"PATCH same-origin referer, no origin":    {method: "PATCH", headers: map[string]string{"cookie": ada, "referer": "https://app.example.com/page?x=1"}, allow: true},
		"DELETE the session's own token":          {method: "DELETE", headers: map[string]string{"cookie": ada, "x-csrf-token": "Zm9vYmFy"}, allow: true},
		"POST origin null, even with the token":   {method: "POST", headers: map[string]string{"cookie": ada, "origin": "null", "x-csrf-token": "Zm9vYmFy"}},
		"POST another session's token, cookie planted to match": {method: "POST",
			headers: map[string]string{"cookie": "session=ada-session; csrf_token=ZXZlZXZl", "x-csrf-token": "ZXZlZXZl"}},
		"POST a made-up token matching its cookie": {method: "POST",
			headers: map[string]string{"cookie": "session=ada-session; csrf_token=bWFkZXVw", "x-csrf-token": "bWFkZXVw"}},
		"POST session without a token":             {method: "POST", headers: map[string]string{"cookie": "session=old-session; csrf_token=", "x-csrf-token": ""}},
		"POST nothing":                             {method: "POST", headers: map[string]string{"cookie": ada}},
		"POST foreign origin":                      {method: "POST", headers: map[string]string{"cookie": ada, "origin": "https://evil.example.net"}},
		"POST other scheme is another origin":      {method: "POST", headers: map[string]string{"cookie": ada, "origin": "http://app.example.com"}},
		"POST foreign origin beats matching token": {method: "POST", headers: map[string]string{"cookie": ada, "origin": "https://evil.example.net", "x-csrf-token": "Zm9vYmFy"}},
		"POST foreign referer":                     {method: "POST", headers: map[string]string{"cookie": ada, "referer": "https://evil.example.net/x"}},
		"POST token mismatch":                      {method: "POST", headers: map[string]string{"cookie": ada, "x-csrf-token": "Zm9vYmFz"}},
		"POST token header only":                   {method: "POST", headers: map[string]string{"cookie": "session=ada-session", "x-csrf-token": "Zm9vYmFy"}},
		"POST token cookie only":                   {method: "POST", headers: map[string]string{"cookie": ada}},
		"unknown method is unsafe":                 {method: "PROPFIND", headers: map[string]string{"cookie": ada}},
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

// TestCheckCSRFWithoutSessionTakesNoToken: a csrfInterceptor with no
// sessionInterceptor before it has no session to tie a token to, so only
// the origin decides; a matching header and cookie prove nothing.
func TestCheckCSRFWithoutSessionTakesNoToken(t *testing.T) {
	e := newEnv(t)
	value := encode(t, chain.Interceptor{Type: chain.TypeCSRF})
	mustAllow(t, e.check(t, value, req{method: "POST", headers: map[string]string{"origin": "https://app.example.com"}}))
	resp := e.check(t, value, req{method: "POST", headers: map[string]string{"cookie": "csrf_token=Zm9vYmFy", "x-csrf-token": "Zm9vYmFy"}})
	if d := mustDeny(t, resp); d.status != 403 {
		t.Errorf("double-submit token without a session: status %d, want 403", d.status)
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
