package chain

import (
	"strings"
	"testing"
)

// TestInterceptorURLCredentials (issue 22): a REST interceptor URL with
// user:password@ is refused (the chain travels in Envoy's route
// configuration: its config dump, l7 render and l7's errors would show
// them), and no message about a URL shows its credentials. On main it was
// accepted and served, and a bad URL's error repeated it whole.
func TestInterceptorURLCredentials(t *testing.T) {
	for name, u := range map[string]string{
		"user and password": "http://ops:s3cr3t-pw@authz.internal:8080/check",
		"token as the user": "https://s3cr3t-pw@authz.internal/check",
		"bad scheme":        "ftp://ops:s3cr3t-pw@authz.internal/check",
		"does not parse":    "http://ops:s3cr3t-pw@[::1/check",
	} {
		_, err := Decode(`[{"type":"external","id":"authz","transport":"rest","url":"` + u + `"}]`)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "url") {
			t.Errorf("%s: error %q shows the credentials or names no field", name, err)
		}
	}
	if _, err := Decode(`[{"type":"external","id":"authz","transport":"rest","url":"http://authz.internal:8080/check"}]`); err != nil {
		t.Errorf("a URL without credentials: %v", err)
	}
	for in, want := range map[string]string{
		"http://a:b@h/p":       "http://REDACTED@h/p",
		"http://h/p":           "http://h/p",
		"http://a:b@[::1/p":    "http://REDACTED@[::1/p",
		"no scheme at all a@b": "no scheme at all a@b",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
