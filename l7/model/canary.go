package model

import (
	"fmt"
	"regexp"
	"strings"
)

// Canary sends a share of a route's requests to another upstream of the
// same service: those that carry a header value, those that carry a
// cookie value (seed 000's A/B per account), and Percent of the rest.
type Canary struct {
	// Upstream is the canary's upstream, in the route's service.
	Upstream string
	// Header, when set, sends requests with this exact header value to
	// the canary.
	Header *CanaryMatch
	// Cookie, when set, sends requests with this exact cookie value to
	// the canary.
	Cookie *CanaryMatch
	// Percent (0..100) of the requests matched by neither go to the
	// canary, chosen per request.
	Percent uint32
}

// CanaryMatch is a header or cookie name and the value that picks the
// canary.
type CanaryMatch struct {
	Name  string
	Value string
}

// checkCanaries adds the field errors of the routes' canaries; ups holds
// the service's upstream names.
func checkCanaries(s Service, ups map[string]bool, bad func(field, format string, a ...any)) {
	for i, r := range s.Routes {
		c := r.Canary
		if c == nil {
			continue
		}
		f := fmt.Sprintf("routes[%d].canary", i)
		if !ups[c.Upstream] {
			bad(f+".upstream", "no upstream %q in this service", c.Upstream)
		}
		if len(r.Targets) == 1 && r.Targets[0].Upstream == c.Upstream {
			bad(f+".upstream", "%q is already the route's target; name another upstream", c.Upstream)
		}
		if c.Header == nil && c.Cookie == nil && c.Percent == 0 {
			bad(f, "set header, cookie or percent (1..100)")
		}
		if c.Percent > 100 {
			bad(f+".percent", "want 0..100, got %d", c.Percent)
		}
		if c.Percent > 0 && len(r.Targets) > 1 {
			bad(f+".percent", "a percentage canary needs a route with a single target; the route already splits between targets")
		}
		if h := c.Header; h != nil {
			if err := checkHeaderName(h.Name); err != nil || strings.HasPrefix(h.Name, ":") {
				bad(f+".header.name", "%q is not a lower-case header name", h.Name)
			}
			if h.Value == "" {
				bad(f+".header.value", "required")
			}
		}
		if k := c.Cookie; k != nil {
			if !cookieNameRE.MatchString(k.Name) {
				bad(f+".cookie.name", "%q is not a cookie name", k.Name)
			}
			if k.Value == "" || !cookieValueRE.MatchString(k.Value) {
				bad(f+".cookie.value", "%q is not a cookie value (letters, digits and !#$%%&'()*+-./:<=>?@[]^_`{|}~, no spaces, quotes, commas or semicolons)", k.Value)
			}
		}
	}
}

var (
	cookieNameRE  = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)
	cookieValueRE = regexp.MustCompile("^[!#$%&'()*+\\-./0-9:<=>?@A-Z\\[\\]^_`a-z{|}~]+$")
)
