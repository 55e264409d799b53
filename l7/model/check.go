package model

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

// checkService returns the field errors of one service taken alone.
func checkService(s Service) []Problem {
	var ps []Problem
	bad := func(field, format string, a ...any) {
		ps = append(ps, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: field, Msg: fmt.Sprintf(format, a...), Rejected: true})
	}
	warn := func(field, format string, a ...any) {
		ps = append(ps, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	if err := checkName(s.Name); err != nil {
		bad("name", "%v", err)
	}
	if err := checkName(s.Group); err != nil {
		bad("group", "%v", err)
	}
	for i, h := range s.Hosts {
		if err := checkHost(h); err != nil {
			bad(fmt.Sprintf("hosts[%d]", i), "%v", err)
		}
	}
	ups := map[string]bool{}
	sticky := map[string]bool{}
	for _, r := range s.Routes {
		for _, t := range r.Targets {
			if r.Sticky != nil {
				sticky[t.Upstream] = true
			}
		}
	}
	for i, u := range s.Upstreams {
		f := fmt.Sprintf("upstreams[%d]", i)
		if err := checkName(u.Name); err != nil {
			bad(f+".name", "%v", err)
		}
		if ups[u.Name] {
			bad(f+".name", "upstream %q declared twice", u.Name)
		}
		ups[u.Name] = true
		seen := map[string]bool{}
		for j, e := range u.Endpoints {
			if !e.Addr.IsValid() || e.Addr.Port() == 0 {
				bad(fmt.Sprintf("%s.endpoints[%d]", f, j), "want ip:port with a non-zero port")
			}
			if seen[e.Addr.String()] {
				bad(fmt.Sprintf("%s.endpoints[%d]", f, j), "endpoint %s listed twice", e.Addr)
			}
			seen[e.Addr.String()] = true
		}
		checkUpstreamDNS(u, f, bad)
		checkUpstreamHealth(u, f, sticky[u.Name], bad)
		checkUpstreamTLS(u.TLS, f+".tls", bad)
	}
	if len(s.Routes) == 0 {
		bad("routes", "a service needs at least one route")
	}
	refs := map[ListenerRef]bool{}
	for i, ref := range s.Listeners {
		if checkName(ref.Gateway) != nil || checkName(ref.Listener) != nil {
			bad(fmt.Sprintf("listeners[%d]", i), "want gateway/listener, got %q", ref)
		}
		if refs[ref] {
			bad(fmt.Sprintf("listeners[%d]", i), "listener %q named twice", ref)
		}
		refs[ref] = true
	}
	for i, d := range s.Delegations {
		f := fmt.Sprintf("delegations[%d]", i)
		if !strings.HasPrefix(d.Prefix, "/") {
			bad(f+".prefix", "must start with /, got %q", d.Prefix)
		}
		if len(d.Namespaces) == 0 {
			bad(f+".namespaces", "name at least one namespace (or \"*\")")
		}
		for j, ns := range d.Namespaces {
			if ns != "*" && checkName(ns) != nil {
				bad(fmt.Sprintf("%s.namespaces[%d]", f, j), "%q is not a namespace name", ns)
			}
		}
	}
	names := map[string]bool{}
	for i, r := range s.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		if r.Name != "" {
			if names[r.Name] {
				bad(f+".name", "route name %q used twice", r.Name)
			}
			names[r.Name] = true
		}
		checkRouteMatch(r, f, bad)
		checkRouteTargets(r, f, ups, bad)
		checkRouteRewrites(r, f, ups, bad)
		if r.Rewrite != nil {
			if r.Rewrite.Regex == "" {
				bad(f+".rewrite.old", "required")
			} else if err := CheckRegex(r.Rewrite.Regex); err != nil {
				bad(f+".rewrite.old", "%v", err)
			}
		}
		if r.BackendTimeout < 0 || (r.BackendTimeout > 0 && r.Timeout > 0 && r.BackendTimeout > r.Timeout) {
			bad(f+".backendTimeout", "want a positive duration no longer than the route's timeout %s, got %s", r.Timeout, r.BackendTimeout)
		}
		if r.Retries != nil && r.Retries.Attempts == 0 {
			bad(f+".retries.attempts", "must be positive")
		}
		if r.Sticky != nil && checkHeaderName(r.Sticky.Cookie) != nil {
			bad(f+".sticky.cookie", "not a valid cookie name %q", r.Sticky.Cookie)
		}
		if len(r.Interceptors) > 0 {
			if _, err := chain.Encode(r.Interceptors); err != nil {
				field, msg := splitField(err.Error())
				bad(f+"."+field, "%s", msg)
			}
		}
	}
	checkJWT(s, bad)
	checkCORS(s.CORS, "cors", bad)
	for i, r := range s.Routes {
		checkCORS(r.CORS, fmt.Sprintf("routes[%d].cors", i), bad)
	}
	checkRateLimits(s, bad, warn)
	checkResponses(s, bad)
	checkCanaries(s, ups, bad)
	return ps
}

// checkGateway returns the field errors of one gateway taken alone.
func checkGateway(g Gateway, certs map[string]bool) []Problem {
	var ps []Problem
	bad := func(field, format string, a ...any) {
		ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: field, Msg: fmt.Sprintf(format, a...), Rejected: true})
	}
	if err := checkName(g.Name); err != nil {
		bad("name", "%v", err)
	}
	if err := checkName(g.Group); err != nil {
		bad("group", "%v", err)
	}
	if len(g.Listeners) == 0 {
		bad("listeners", "a gateway needs at least one listener")
	}
	checkTracing(g.Tracing, bad)
	names := map[string]bool{}
	for i, l := range g.Listeners {
		f := fmt.Sprintf("listeners[%d]", i)
		if err := checkName(l.Name); err != nil {
			bad(f+".name", "%v", err)
		}
		if names[l.Name] {
			bad(f+".name", "listener name %q used twice", l.Name)
		}
		names[l.Name] = true
		if !l.VIP.IsValid() {
			bad(f+".vip", "want an IP address")
		}
		if l.Port == 0 || l.Port > 65535 {
			bad(f+".port", "want 1..65535, got %d", l.Port)
		}
		switch l.Protocol {
		case TLS:
			checkPassthrough(l, f, bad)
		case HTTP:
			if len(l.TLS) > 0 {
				bad(f+".certificates", "only HTTPS listeners carry certificates")
			}
		case HTTPS:
			if len(l.TLS) == 0 {
				bad(f+".certificates", "an HTTPS listener needs at least one certificate")
			}
		case TCP:
			if l.Target == "" {
				bad(f+".target", "a TCP listener needs a target service/upstream")
			}
			if len(l.TLS) > 0 {
				bad(f+".certificates", "TCP listeners pass TLS through; they carry no certificates")
			}
		default:
			bad(f+".protocol", "want HTTP, HTTPS, TCP or TLS, got %q", l.Protocol)
		}
		if l.RedirectHTTPS && l.Protocol != HTTP {
			bad(f+".redirectHTTPS", "only an HTTP listener can redirect to HTTPS")
		}
		if l.Default && (l.RedirectHTTPS || (l.Protocol != HTTP && l.Protocol != HTTPS)) {
			bad(f+".default", "only an HTTP or HTTPS listener that serves routes (no redirectHTTPS) can serve the services that name no listener")
		}
		if l.Protocol != TLS && len(l.Passthrough) > 0 {
			bad(f+".passthrough", "only TLS listeners pass connections through by server name")
		}
		checkListenerTLS(l, f, bad)
		defaultChain := false
		for j, c := range l.TLS {
			if !certs[c.Certificate] {
				bad(fmt.Sprintf("%s.certificates[%d].certificate", f, j), "no certificate %q", c.Certificate)
			}
			if len(c.ServerNames) == 0 {
				// No names: the default chain, served for every other name.
				if defaultChain {
					bad(fmt.Sprintf("%s.certificates[%d].sni", f, j), "only one certificate may be served for every server name (no names)")
				}
				defaultChain = true
			}
			for k, n := range c.ServerNames {
				if err := checkHost(n); err != nil || n == "*" {
					bad(fmt.Sprintf("%s.certificates[%d].sni[%d]", f, j, k), "not a server name: %q", n)
				}
			}
		}
	}
	return ps
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$`)

func checkName(n string) error {
	if !nameRE.MatchString(n) {
		return fmt.Errorf("%q is not a name (lower-case letters, digits, '-' and '.', at most 63)", n)
	}
	return nil
}

var hostRE = regexp.MustCompile(`^(\*|(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*)$`)

func checkHost(h string) error {
	if len(h) > 253 || !hostRE.MatchString(h) {
		return fmt.Errorf("%q is not a host name (lower case, an optional leading \"*.\", or \"*\")", h)
	}
	return nil
}

var headerRE = regexp.MustCompile(`^[a-z0-9!#$%&'*+.^_|~-]+$`)

func checkHeaderName(h string) error {
	if !headerRE.MatchString(h) {
		return fmt.Errorf("%q is not a lower-case header or cookie name", h)
	}
	return nil
}

// CheckService returns the field errors of one service taken alone, joined,
// or nil. Sources call it to reject a bad object early.
// Problems that keep the service (a warning) are left out.
func CheckService(s Service) error {
	var rejected []Problem
	for _, p := range checkService(s) {
		if p.Rejected {
			rejected = append(rejected, p)
		}
	}
	return joinProblems(rejected)
}

// anyRejected reports whether one of ps leaves its object out.
func anyRejected(ps []Problem) bool {
	for _, p := range ps {
		if p.Rejected {
			return true
		}
	}
	return false
}

// CheckGateway returns the field errors of one gateway taken alone, joined,
// or nil; certs holds the certificate names it may refer to.
func CheckGateway(g Gateway, certs map[string]bool) error {
	return joinProblems(checkGateway(g, certs))
}

func joinProblems(ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// splitField splits "field: message" (the form of chain's errors).
func splitField(s string) (string, string) {
	if f, m, ok := strings.Cut(s, ": "); ok && !strings.ContainsAny(f, " \"") {
		return f, m
	}
	return "interceptors", s
}
