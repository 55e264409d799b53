package builtin

import (
	"context"
	"testing"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// FuzzCSRFNeverAllowsAForeignOrigin: whatever the other headers (tokens,
// Referer), an unsafe request whose Origin is a URL naming neither the
// request's own origin nor an allowed one is refused.
func FuzzCSRFNeverAllowsAForeignOrigin(f *testing.F) {
	f.Add("POST", "app.example.com", "https://evil.example.net", "", "t", "csrf_token=t")
	f.Add("DELETE", "app.example.com:8443", "https://evil.example.net:8443", "https://app.example.com/", "", "")
	c := NewCSRF(chain.Interceptor{Type: chain.TypeCSRF, TokenHeader: "x-csrf-token", TokenCookie: "csrf_token",
		AllowedOrigins: []string{"https://admin.example.com"}})
	f.Fuzz(func(t *testing.T, method, host, originHdr, referer, token, cookie string) {
		r := &intercept.Request{Method: method, Host: host, Scheme: "https", Headers: map[string]string{
			"origin": originHdr, "referer": referer, "x-csrf-token": token, "cookie": cookie}}
		v, err := c.Intercept(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		switch method {
		case "GET", "HEAD", "OPTIONS", "TRACE":
			return
		}
		o, ok := origin(originHdr)
		if !ok || o == "https://admin.example.com" {
			return
		}
		if own, ok := origin("https://" + host); ok && own == o {
			return
		}
		if v.Deny == nil {
			t.Fatalf("%s from origin %q to host %q allowed", method, originHdr, host)
		}
	})
}
