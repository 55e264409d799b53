package model

import (
	"fmt"
	"mime"
	"slices"
	"strings"
	"time"
)

// HSTSHeader is the name of the header HSTS sets; a service changes it
// through HSTS, not through its header rules.
const HSTSHeader = "strict-transport-security"

// unchangeableHeaders are refused in header rules: Envoy refuses to add
// or remove host (and every ":"-prefixed pseudo-header), and the
// hop-by-hop headers of RFC 7230 section 6.1 belong to each connection,
// which Envoy manages itself.
var unchangeableHeaders = map[string]string{
	"host":              "Envoy refuses to change host; rewrite the route instead",
	"connection":        "a hop-by-hop header, managed by Envoy per connection",
	"keep-alive":        "a hop-by-hop header, managed by Envoy per connection",
	"proxy-connection":  "a hop-by-hop header, managed by Envoy per connection",
	"transfer-encoding": "a hop-by-hop header, managed by Envoy per connection",
	"te":                "a hop-by-hop header, managed by Envoy per connection",
	"trailer":           "a hop-by-hop header, managed by Envoy per connection",
	"upgrade":           "a hop-by-hop header, managed by Envoy per connection",
	HSTSHeader:          "set by hsts on HTTPS listeners; use hsts to change it",
}

// checkResponses adds the field errors of a service's response settings.
func checkResponses(s Service, bad func(field, format string, a ...any)) {
	if sr := s.Responses; sr != nil {
		checkHeaderRules(sr.Headers, "", bad)
		if h := sr.HSTS; h != nil {
			switch {
			case h.MaxAge < 0 || h.MaxAge%time.Second != 0:
				bad("hsts.maxAge", "want a whole number of seconds, got %s", h.MaxAge)
			case h.Preload && (!h.IncludeSubDomains || (h.MaxAge != 0 && h.MaxAge < DefaultHSTSMaxAge)):
				bad("hsts.preload", "preload needs includeSubDomains and a maxAge of at least a year (8760h)")
			}
		}
		checkErrorPages(sr.ErrorPages, "errorPages", bad)
		checkMaintenance(sr.Maintenance, "maintenance", bad)
	}
	for i, r := range s.Routes {
		rr := r.Responses
		if rr == nil {
			continue
		}
		f := fmt.Sprintf("routes[%d]", i)
		checkHeaderRules(rr.Headers, f+".", bad)
		checkErrorPages(rr.ErrorPages, f+".errorPages", bad)
		checkMaintenance(rr.Maintenance, f+".maintenance", bad)
		if d := rr.DirectResponse; d != nil {
			if len(r.Targets) > 0 {
				bad(f+".directResponse", "a route that answers itself has no target; drop target/targets")
			}
			if d.Status < 200 || d.Status > 599 {
				bad(f+".directResponse.status", "want 200..599, got %d", d.Status)
			}
			checkBody(d.Body, d.ContentType, f+".directResponse", bad)
		}
	}
}

// checkHeaderRules checks the rules of a service (f "") or a route (f
// "routes[i].").
func checkHeaderRules(h *HeaderRules, f string, bad func(field, format string, a ...any)) {
	if h == nil {
		return
	}
	for _, d := range []struct {
		dir string
		e   HeaderEdits
	}{{"requestHeaders", h.Request}, {"responseHeaders", h.Response}} {
		dir, e := d.dir, d.e
		for _, op := range []string{"set", "add"} {
			m := e.Set
			if op == "add" {
				m = e.Add
			}
			for _, name := range sortedKeys(m) {
				field := fmt.Sprintf("%s%s.%s.%s", f, dir, op, name)
				if msg := headerRuleName(name); msg != "" {
					bad(field, "%s", msg)
				}
				if msg := headerValue(m[name]); msg != "" {
					bad(field, "%s", msg)
				}
				if _, both := e.Set[name]; both && op == "add" {
					bad(field, "%q is in set too; set overwrites, add appends: choose one", name)
				}
			}
		}
		seen := map[string]bool{}
		for j, name := range e.Remove {
			field := fmt.Sprintf("%s%s.remove[%d]", f, dir, j)
			if msg := headerRuleName(name); msg != "" {
				bad(field, "%s", msg)
			}
			if seen[name] {
				bad(field, "%q listed twice", name)
			}
			seen[name] = true
		}
	}
}

// headerRuleName says what is wrong with a header name in a rule, or "".
func headerRuleName(name string) string {
	switch {
	case strings.HasPrefix(name, ":"):
		return fmt.Sprintf("%q is a pseudo-header; Envoy refuses to change those", name)
	case checkHeaderName(name) != nil:
		return fmt.Sprintf("%q is not a lower-case header name (an RFC 7230 token)", name)
	case unchangeableHeaders[name] != "":
		return fmt.Sprintf("%q cannot be changed: %s", name, unchangeableHeaders[name])
	}
	return ""
}

// headerValue says what is wrong with a header value, or "".
func headerValue(v string) string {
	if len(v) > 8192 {
		return "value longer than 8192 bytes"
	}
	for _, c := range v {
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return fmt.Sprintf("value %q holds a control character", v)
		}
	}
	if strings.Contains(v, "%") {
		// Envoy reads header values as format strings (%REQ(...)%); an
		// unknown command would make it refuse the whole route table.
		return fmt.Sprintf("value %q holds %%, which Envoy reads as a command", v)
	}
	return ""
}

func checkErrorPages(ps []ErrorPage, f string, bad func(field, format string, a ...any)) {
	seen := map[uint32]bool{}
	for i, p := range ps {
		pf := fmt.Sprintf("%s[%d]", f, i)
		if len(p.Statuses) == 0 {
			bad(pf+".statuses", "list at least one status (400..599)")
		}
		for j, st := range p.Statuses {
			if st < 400 || st > 599 {
				bad(fmt.Sprintf("%s.statuses[%d]", pf, j), "want an error status 400..599, got %d", st)
			}
			if seen[st] {
				bad(fmt.Sprintf("%s.statuses[%d]", pf, j), "status %d has a page already", st)
			}
			seen[st] = true
		}
		if p.Body == "" {
			bad(pf+".body", "required")
		}
		checkBody(p.Body, p.ContentType, pf, bad)
	}
}

func checkMaintenance(m *Maintenance, f string, bad func(field, format string, a ...any)) {
	if m == nil {
		return
	}
	if m.Status != 0 && (m.Status < 200 || m.Status > 599) {
		bad(f+".status", "want 200..599, got %d", m.Status)
	}
	if m.RetryAfter < 0 || m.RetryAfter%time.Second != 0 {
		bad(f+".retryAfter", "want a whole number of seconds, got %s", m.RetryAfter)
	}
	checkBody(m.Body, m.ContentType, f, bad)
}

func checkBody(body, contentType, f string, bad func(field, format string, a ...any)) {
	if len(body) > MaxResponseBody {
		bad(f+".body", "longer than %d bytes", MaxResponseBody)
	}
	if contentType == "" {
		return
	}
	if _, _, err := mime.ParseMediaType(contentType); err != nil || headerValue(contentType) != "" {
		bad(f+".contentType", "%q is not a media type such as \"text/html; charset=utf-8\"", contentType)
	}
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
