package model

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// CORSPolicy is the cross-origin policy of a service or a route, applied
// by Envoy's CORS filter, which also answers preflight requests itself.
type CORSPolicy struct {
	// Origins are allowed origins (scheme://host[:port]) or "*" for any.
	// A host may start with "*.", which stands for one or more labels
	// ("https://*.example.com" allows https://a.b.example.com, not
	// https://example.com).
	Origins []string
	// Methods, Headers and ExposeHeaders fill the Access-Control-Allow-
	// Methods, -Allow-Headers and -Expose-Headers headers.
	Methods       []string
	Headers       []string
	ExposeHeaders []string
	// Credentials allows cookies and Authorization cross-origin.
	Credentials bool
	// MaxAge is how long a browser may cache a preflight's answer; zero
	// sends none.
	MaxAge time.Duration
}

// EffectiveCORS returns a route's policy: its own, else its service's.
func EffectiveCORS(s Service, r Route) *CORSPolicy {
	if r.CORS != nil {
		return r.CORS
	}
	return s.CORS
}

var methodRE = headerRE // an HTTP method is a token too; checked upper case below

// checkCORS adds the field errors of a policy at field f. A Gateway API
// policy may allow credentials with the origin "*": the spec asks for
// the request's origin echoed then, as Envoy always answers, which
// browsers accept.
func checkCORS(c *CORSPolicy, f string, gatewayAPI bool, bad func(field, format string, a ...any)) {
	if c == nil {
		return
	}
	if len(c.Origins) == 0 {
		bad(f+".allowOrigins", "list at least one origin, or \"*\"")
	}
	for i, o := range c.Origins {
		if o == "*" {
			if c.Credentials && !gatewayAPI {
				bad(fmt.Sprintf("%s.allowOrigins[%d]", f, i), "\"*\" cannot be combined with allowCredentials (browsers refuse it); list the origins")
			}
			continue
		}
		plain := strings.Replace(o, "://*.", "://wildcard.", 1) // a wildcard only there
		u, err := url.Parse(plain)
		if err != nil || strings.Contains(plain, "*") || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil || o != strings.ToLower(o) {
			bad(fmt.Sprintf("%s.allowOrigins[%d]", f, i), "%q is not a lower-case origin like https://app.example.com or https://*.example.com, or \"*\"", o)
		}
	}
	for i, m := range c.Methods {
		if !methodRE.MatchString(strings.ToLower(m)) || m != strings.ToUpper(m) {
			bad(fmt.Sprintf("%s.allowMethods[%d]", f, i), "%q is not an upper-case HTTP method", m)
		}
	}
	for field, hs := range map[string][]string{"allowHeaders": c.Headers, "exposeHeaders": c.ExposeHeaders} {
		for i, h := range hs {
			if checkHeaderName(strings.ToLower(h)) != nil {
				bad(fmt.Sprintf("%s.%s[%d]", f, field, i), "%q is not a header name", h)
			}
		}
	}
	if c.MaxAge < 0 || c.MaxAge%time.Second != 0 {
		bad(f+".maxAge", "want a whole number of seconds, got %s", c.MaxAge)
	}
}

// OriginRegex returns the RE2 pattern, matched against the whole Origin
// header, of an origin of Origins that has a wildcard host ("*." in
// front), and false for an exact origin or "*".
func OriginRegex(o string) (string, bool) {
	scheme, host, ok := strings.Cut(o, "://*.")
	if !ok {
		return "", false
	}
	return regexp.QuoteMeta(scheme+"://") + `[a-z0-9-]+(\.[a-z0-9-]+)*\.` + regexp.QuoteMeta(host), true
}
