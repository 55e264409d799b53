package model

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// CORSPolicy is the cross-origin policy of a service or a route, applied
// by Envoy's CORS filter, which also answers preflight requests itself.
type CORSPolicy struct {
	// Origins are allowed origins (scheme://host[:port]) or "*" for any.
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

// checkCORS adds the field errors of a policy at field f.
func checkCORS(c *CORSPolicy, f string, bad func(field, format string, a ...any)) {
	if c == nil {
		return
	}
	if len(c.Origins) == 0 {
		bad(f+".allowOrigins", "list at least one origin, or \"*\"")
	}
	for i, o := range c.Origins {
		if o == "*" {
			if c.Credentials {
				bad(fmt.Sprintf("%s.allowOrigins[%d]", f, i), "\"*\" cannot be combined with allowCredentials (browsers refuse it); list the origins")
			}
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil || o != strings.ToLower(o) {
			bad(fmt.Sprintf("%s.allowOrigins[%d]", f, i), "%q is not a lower-case origin like https://app.example.com, or \"*\"", o)
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
