package builtin

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// CSRF is csrfInterceptor (scheme: see the package comment).
type CSRF struct {
	tokenHeader  string
	tokenCookie  string
	sessionField string
	allowed      map[string]bool // normalised origins
}

// NewCSRF builds csrfInterceptor from its decoded settings.
func NewCSRF(cfg chain.Interceptor) *CSRF {
	c := &CSRF{tokenHeader: cfg.TokenHeader, tokenCookie: cfg.TokenCookie, sessionField: cfg.SessionField, allowed: map[string]bool{}}
	if c.sessionField == "" {
		c.sessionField = chain.DefaultCSRFSessionField
	}
	for _, o := range cfg.AllowedOrigins {
		if n, ok := origin(o); ok {
			c.allowed[n] = true
		}
	}
	return c
}

// Intercept lets safe methods pass and checks unsafe ones.
func (c *CSRF) Intercept(_ context.Context, r *intercept.Request) (intercept.Verdict, error) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return intercept.Allow(), nil
	}
	if v, ok := r.Headers["origin"]; ok && strings.TrimSpace(v) == "null" {
		// An opaque origin: a sandboxed frame, a data: URL, a redirect
		// across sites. Anyone can make one, so it proves nothing, and a
		// token does not make up for it.
		return intercept.Refuse(http.StatusForbidden, "forbidden: opaque origin (Origin: null)\n"), nil
	}
	if o, named := requestOrigin(r); named {
		if c.sameOrigin(r, o) {
			return intercept.Allow(), nil
		}
		return intercept.Refuse(http.StatusForbidden, "forbidden: cross-origin request\n"), nil
	}
	if r.Session == nil {
		return intercept.Refuse(http.StatusForbidden, "forbidden: the request names no origin, and without a session there is no CSRF token to check\n"), nil
	}
	want := r.Session[c.sessionField]
	header := r.Headers[c.tokenHeader]
	cookie, _ := r.Cookie(c.tokenCookie)
	if want != "" && subtle.ConstantTimeCompare([]byte(header), []byte(want)) == 1 &&
		subtle.ConstantTimeCompare([]byte(cookie), []byte(want)) == 1 {
		return intercept.Allow(), nil
	}
	return intercept.Refuse(http.StatusForbidden, "forbidden: missing or mismatched CSRF token\n"), nil
}

func (c *CSRF) sameOrigin(r *intercept.Request, o string) bool {
	if c.allowed[o] {
		return true
	}
	own, ok := origin(r.Scheme + "://" + r.Host)
	return ok && own == o
}

// requestOrigin returns the origin the request names (Origin, else
// Referer), normalised. named is false when it names none: neither
// header. An unparsable value is named but matches nothing. (Origin
// "null" is refused before.)
func requestOrigin(r *intercept.Request) (o string, named bool) {
	if v, ok := r.Headers["origin"]; ok && v != "" {
		n, _ := origin(v)
		return n, true
	}
	if v, ok := r.Headers["referer"]; ok && v != "" {
		n, _ := origin(v)
		return n, true
	}
	return "", false
}

// origin normalises a URL or origin to scheme://host[:port], lower case,
// default ports dropped.
func origin(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if scheme == "https" {
		host = strings.TrimSuffix(host, ":443")
	} else {
		host = strings.TrimSuffix(host, ":80")
	}
	return scheme + "://" + host, true
}
