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
	checkServiceNames(s, bad)
	ups := checkUpstreams(s, bad)
	if len(s.Routes) == 0 {
		bad("routes", "a service needs at least one route")
	}
	checkListenerRefs(s.Listeners, bad)
	checkDelegations(s.Delegations, bad)
	checkRoutes(s.Routes, ups, bad)
	checkJWT(s, bad)
	checkCORS(s.CORS, "cors", s.GatewayAPI, bad)
	for i, r := range s.Routes {
		checkCORS(r.CORS, fmt.Sprintf("routes[%d].cors", i), s.GatewayAPI, bad)
	}
	checkRateLimits(s, bad, warn)
	checkResponses(s, bad)
	checkCanaries(s, ups, bad)
	return ps
}

// checkServiceNames adds the field errors of a service's name, group and
// host names.
func checkServiceNames(s Service, bad func(field, format string, a ...any)) {
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
}

// checkUpstreams adds the field errors of a service's upstreams: names
// declared once, endpoints, DNS, health and TLS. It returns the names
// declared, which routes, mirrors and canaries may target.
func checkUpstreams(s Service, bad func(field, format string, a ...any)) map[string]bool {
	sticky := map[string]bool{}
	for _, r := range s.Routes {
		for _, t := range r.Targets {
			if r.Sticky != nil {
				sticky[t.Upstream] = true
			}
		}
	}
	ups := map[string]bool{}
	for i, u := range s.Upstreams {
		f := fmt.Sprintf("upstreams[%d]", i)
		if err := checkName(u.Name); err != nil {
			bad(f+".name", "%v", err)
		}
		if ups[u.Name] {
			bad(f+".name", "upstream %q declared twice", u.Name)
		}
		ups[u.Name] = true
		checkEndpoints(u.Endpoints, f, bad)
		checkUpstreamDNS(u, f, bad)
		checkUpstreamHealth(u, f, sticky[u.Name], bad)
		checkUpstreamTLS(u.TLS, f+".tls", bad)
	}
	return ups
}

// checkEndpoints adds the field errors of an upstream's endpoints at
// field f: each an ip:port with a port, listed once.
func checkEndpoints(es []Endpoint, f string, bad func(field, format string, a ...any)) {
	seen := map[string]bool{}
	for j, e := range es {
		if !e.Addr.IsValid() || e.Addr.Port() == 0 {
			bad(fmt.Sprintf("%s.endpoints[%d]", f, j), "want ip:port with a non-zero port")
		}
		if seen[e.Addr.String()] {
			bad(fmt.Sprintf("%s.endpoints[%d]", f, j), "endpoint %s listed twice", e.Addr)
		}
		seen[e.Addr.String()] = true
	}
}

// checkListenerRefs adds the field errors of the gateway listeners a
// service names: each gateway/listener, named once.
func checkListenerRefs(listeners []ListenerRef, bad func(field, format string, a ...any)) {
	refs := map[ListenerRef]bool{}
	for i, ref := range listeners {
		if checkName(ref.Gateway) != nil || checkName(ref.Listener) != nil {
			bad(fmt.Sprintf("listeners[%d]", i), "want gateway/listener, got %q", ref)
		}
		if refs[ref] {
			bad(fmt.Sprintf("listeners[%d]", i), "listener %q named twice", ref)
		}
		refs[ref] = true
	}
}

// checkDelegations adds the field errors of the paths a service opens to
// other namespaces: a path prefix and at least one namespace (or "*").
func checkDelegations(ds []Delegation, bad func(field, format string, a ...any)) {
	for i, d := range ds {
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
}

// checkRoutes adds the field errors of a service's routes, each taken
// alone, and of a route name used twice; ups are the service's upstreams.
func checkRoutes(routes []Route, ups map[string]bool, bad func(field, format string, a ...any)) {
	names := map[string]bool{}
	for i, r := range routes {
		f := fmt.Sprintf("routes[%d]", i)
		if r.Name != "" {
			if names[r.Name] {
				bad(f+".name", "route name %q used twice", r.Name)
			}
			names[r.Name] = true
		}
		checkRouteMatch(r, f, bad)
		checkRouteTargets(r, f, ups, bad)
		checkTargetHeaders(r, f, bad)
		checkRouteRewrites(r, f, ups, bad)
		checkRouteForwarding(r, f, bad)
	}
}

// checkRouteForwarding adds the field errors of how a route forwards at
// field f: its regex path rewrite, backend timeout, retries, sticky
// cookie and interceptor chain.
func checkRouteForwarding(r Route, f string, bad func(field, format string, a ...any)) {
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
	if r.Retries != nil {
		checkRetries(*r.Retries, f+".retries", bad)
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
