package model

import (
	"fmt"
	"regexp"
	"strings"
)

// Checks of the route matches, actions and listeners that Gateway API
// brought to the model (see gatewayapi.go); the DSL's own fields are
// checked here too where they meet them (a route's path match, its
// header matches, its targets).

// checkRouteMatch adds the field errors of what a route matches: exactly
// one of prefix, exact path and pattern; a method that is an HTTP token;
// header and query matches by exact value, RE2 regex or presence; a
// segment prefix only on a prefix route.
func checkRouteMatch(r Route, f string, bad func(field, format string, a ...any)) {
	checkRoutePath(r, f, bad)
	if r.Method != "" && !tokenRE.MatchString(r.Method) {
		bad(f+".method", "%q is not an HTTP method (a token such as GET)", r.Method)
	}
	checkHeaderMatches(r.Headers, f, bad)
	checkQueryMatches(r.Queries, f, bad)
}

// checkRoutePath adds the field errors of a route's path match: exactly
// one of prefix, exact path and pattern, a path or a valid RE2 pattern,
// and a segment prefix only on a prefix route.
func checkRoutePath(r Route, f string, bad func(field, format string, a ...any)) {
	set := 0
	for _, v := range []string{r.Prefix, r.Exact, r.Regex} {
		if v != "" {
			set++
		}
	}
	switch {
	case set != 1:
		bad(f, "set exactly one of prefix and pattern (or an exact path)")
	case r.Prefix != "" && !strings.HasPrefix(r.Prefix, "/"):
		bad(f+".prefix", "must start with /")
	case r.Exact != "" && !strings.HasPrefix(r.Exact, "/"):
		bad(f+".exact", "must start with /")
	case r.Regex != "":
		if err := CheckRegex(r.Regex); err != nil {
			bad(f+".pattern", "%v", err)
		}
	}
	switch {
	case r.SegmentPrefix && r.Prefix == "":
		bad(f+".segmentPrefix", "only a prefix route matches whole path segments")
	case r.SegmentPrefix && strings.ContainsAny(r.Prefix, "?#"):
		bad(f+".prefix", "a path segment prefix cannot hold ? or #, got %q", r.Prefix)
	}
}

// checkHeaderMatches adds the field errors of a route's header matches:
// a header name, and an exact value, an RE2 regex or presence.
func checkHeaderMatches(hs []HeaderMatch, f string, bad func(field, format string, a ...any)) {
	for j, h := range hs {
		hf := fmt.Sprintf("%s.headers[%d]", f, j)
		if err := checkHeaderName(h.Name); err != nil {
			bad(hf+".name", "%v", err)
		}
		switch {
		case h.Exact != "" && h.Regex != "":
			bad(hf, "set exact or regex, not both")
		case h.Exact == "" && h.Regex == "" && !h.Present:
			bad(hf, "set exact, regex or present")
		case h.Regex != "":
			if err := CheckRegex(h.Regex); err != nil {
				bad(hf+".regex", "%v", err)
			}
		}
	}
}

// checkQueryMatches adds the field errors of a route's query parameter
// matches: a parameter name, matched once, by an exact value or an RE2
// regex.
func checkQueryMatches(qs []QueryMatch, f string, bad func(field, format string, a ...any)) {
	names := map[string]bool{}
	for j, q := range qs {
		qf := fmt.Sprintf("%s.queries[%d]", f, j)
		if q.Name == "" || strings.ContainsAny(q.Name, "&=#? ") {
			bad(qf+".name", "%q is not a query parameter name", q.Name)
		}
		if names[q.Name] {
			bad(qf+".name", "query parameter %q matched twice", q.Name)
		}
		names[q.Name] = true
		switch {
		case (q.Exact == "") == (q.Regex == ""):
			bad(qf, "set exactly one of exact and regex")
		case q.Regex != "":
			if err := CheckRegex(q.Regex); err != nil {
				bad(qf+".regex", "%v", err)
			}
		}
	}
}

// tokenRE is an HTTP token (RFC 9110 section 5.6.2), what a method is.
var tokenRE = regexp.MustCompile(`^[!#$%&'*+.^_|~0-9A-Za-z-]+$`)

// checkRouteTargets adds the field errors of where a route sends its
// requests: upstreams of the service, or a direct response, or a
// redirect, exactly one of them. A target of weight 0 gets no traffic
// when there are several (see WeightedTarget).
func checkRouteTargets(r Route, f string, ups map[string]bool, bad func(field, format string, a ...any)) {
	dr := DirectResponseOf(r)
	switch {
	case r.Redirect != nil && len(r.Targets) > 0:
		bad(f+".redirect", "a redirect route has no targets")
	case r.Redirect != nil && dr != nil:
		bad(f+".redirect", "a route answers with a redirect or a direct response, not both")
	case r.FailedWeight > 0 && len(r.Targets) == 0:
		bad(f+".failedWeight", "a route with no target answers 500 with a direct response, not a failed weight")
	case len(r.Targets) == 0 && dr == nil && r.Redirect == nil:
		bad(f+".targets", "a route needs a target")
	}
	if r.FailedStatus != 0 && r.FailedStatus != 500 && r.FailedStatus != 503 {
		bad(f+".failedStatus", "%d: the failed weight is answered 500 or 503", r.FailedStatus)
	}
	if r.Precedence < 0 {
		bad(f+".precedence", "%d: a precedence is positive (zero: the path's length)", r.Precedence)
	}
	for j, t := range r.Targets {
		if !ups[t.Upstream] {
			bad(fmt.Sprintf("%s.targets[%d].upstream", f, j), "no upstream %q in this service", t.Upstream)
		}
	}
}

// checkRouteRewrites adds the field errors of a route's redirect, URL
// rewrite and mirrors.
func checkRouteRewrites(r Route, f string, ups map[string]bool, bad func(field, format string, a ...any)) {
	checkRedirect(r, f, bad)
	checkURLRewrite(r, f, bad)
	checkMirrors(r.Mirrors, f, ups, bad)
}

// checkRedirect adds the field errors of a route's redirect, if any: its
// scheme, host name, port, status and path, and nothing forwarded.
func checkRedirect(r Route, f string, bad func(field, format string, a ...any)) {
	rd := r.Redirect
	if rd == nil {
		return
	}
	if rd.Scheme != "" && rd.Scheme != "http" && rd.Scheme != "https" {
		bad(f+".redirect.scheme", "want http or https, got %q", rd.Scheme)
	}
	if rd.Hostname != "" && (checkHost(rd.Hostname) != nil || strings.Contains(rd.Hostname, "*")) {
		bad(f+".redirect.hostname", "%q is not a host name", rd.Hostname)
	}
	if rd.Port > 65535 {
		bad(f+".redirect.port", "want 1..65535, got %d", rd.Port)
	}
	if rd.StatusCode != 0 && !RedirectCode(rd.StatusCode) {
		bad(f+".redirect.statusCode", "want 301, 302, 303, 307 or 308, got %d", rd.StatusCode)
	}
	checkPathModifier(r, rd.Path, f+".redirect.path", bad)
	if r.Rewrite != nil || r.URLRewrite != nil || len(r.Mirrors) > 0 || r.Canary != nil {
		bad(f+".redirect", "a redirect route forwards nothing: no rewrite, mirror or canary")
	}
}

// checkURLRewrite adds the field errors of a route's URL rewrite, if
// any: a host name or a path, and no second path rewrite.
func checkURLRewrite(r Route, f string, bad func(field, format string, a ...any)) {
	u := r.URLRewrite
	if u == nil {
		return
	}
	if u.Hostname != "" && (checkHost(u.Hostname) != nil || strings.Contains(u.Hostname, "*")) {
		bad(f+".urlRewrite.hostname", "%q is not a host name", u.Hostname)
	}
	if u.Hostname == "" && u.Path == nil {
		bad(f+".urlRewrite", "set a hostname or a path")
	}
	checkPathModifier(r, u.Path, f+".urlRewrite.path", bad)
	if u.Path != nil && r.Rewrite != nil {
		bad(f+".urlRewrite.path", "the route already rewrites its path (rewrite)")
	}
}

// checkMirrors adds the field errors of a route's mirrors: upstreams of
// the service (ups) and a percentage. An upstream may be mirrored more
// than once: Gateway API allows several RequestMirror filters to one
// backend, each a copy.
func checkMirrors(ms []Mirror, f string, ups map[string]bool, bad func(field, format string, a ...any)) {
	for j, m := range ms {
		mf := fmt.Sprintf("%s.mirrors[%d]", f, j)
		if !ups[m.Upstream] {
			bad(mf+".upstream", "no upstream %q in this service", m.Upstream)
		}
		if m.Percent > 100 {
			bad(mf+".percent", "want 1..100 (0 for 100), got %d", m.Percent)
		}
	}
}

// checkPathModifier adds the field errors of a redirect's or rewrite's
// path: a full path, or a prefix replacement on a prefix route.
func checkPathModifier(r Route, p *PathModifier, f string, bad func(field, format string, a ...any)) {
	switch {
	case p == nil:
	case p.IsPrefix && p.Full != "":
		bad(f, "set full or replacePrefix, not both")
	case p.IsPrefix && r.Prefix == "":
		bad(f+".replacePrefix", "only a prefix route can replace its prefix")
	case p.IsPrefix && !strings.HasPrefix(p.ReplacePrefix, "/"):
		bad(f+".replacePrefix", "must start with /, got %q", p.ReplacePrefix)
	case !p.IsPrefix && !strings.HasPrefix(p.Full, "/"):
		bad(f+".full", "must start with /, got %q", p.Full)
	}
}

// checkPassthrough adds the field errors of a TLS listener: passthrough
// entries with valid, distinct server names (at most one entry without
// any, which takes every other name) and weighted clusters; no
// certificates and no TCP target.
func checkPassthrough(l Listener, f string, bad func(field, format string, a ...any)) {
	if len(l.Passthrough) == 0 {
		bad(f+".passthrough", "a TLS listener needs at least one passthrough entry")
	}
	if len(l.TLS) > 0 {
		bad(f+".certificates", "TLS listeners pass TLS through; they carry no certificates")
	}
	if l.Target != "" {
		bad(f+".target", "a TLS listener forwards by server name (passthrough), not to one target")
	}
	sni := map[string]bool{}
	catchAll := false
	for j, p := range l.Passthrough {
		pf := fmt.Sprintf("%s.passthrough[%d]", f, j)
		if len(p.ServerNames) == 0 {
			if catchAll {
				bad(pf+".serverNames", "only one entry may take every server name (no names)")
			}
			catchAll = true
		}
		for k, n := range p.ServerNames {
			if err := checkHost(n); err != nil || n == "*" {
				bad(fmt.Sprintf("%s.serverNames[%d]", pf, k), "not a server name: %q", n)
			}
			if sni[n] {
				bad(fmt.Sprintf("%s.serverNames[%d]", pf, k), "server name %q is already forwarded by another entry", n)
			}
			sni[n] = true
		}
		if len(p.Targets) == 0 {
			bad(pf+".targets", "an entry needs a target")
		}
		positive := false
		for k, t := range p.Targets {
			svc, up, ok := strings.Cut(t.Cluster, "/")
			if !ok || checkName(svc) != nil || checkName(up) != nil {
				bad(fmt.Sprintf("%s.targets[%d].cluster", pf, k), "want service/upstream, got %q", t.Cluster)
			}
			positive = positive || t.Weight > 0
		}
		if len(p.Targets) > 1 && !positive {
			bad(pf+".targets", "every target has weight 0")
		}
	}
}
