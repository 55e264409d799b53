package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Resolved is a Config after the whole-config checks: only the accepted
// objects, the Envoy listeners with their unprivileged ports, and the
// problems found. It is what the translators consume.
type Resolved struct {
	Config    Config
	Listeners []EnvoyListener
	Problems  []Problem
}

// EnvoyListener is one listening socket of the gateways of a group. HTTP
// and HTTPS listeners of a group that share an external port are merged
// into one (told apart by Host and SNI); every TCP listener gets its own.
type EnvoyListener struct {
	Group    string
	Name     string // e.g. "https-443", "tcp-5432-db.main"
	Protocol Protocol
	External uint32
	Port     uint32 // the unprivileged port Envoy binds
	VIPs     []string
	TLS      []SNICertificate // HTTPS: one filter chain each
	Target   string           // TCP: the cluster
}

// Incumbent reports whether an object of kind ("service", "gateway") and name
// is part of the config served now. In a conflict the incumbent wins, so a
// new object cannot take over what already serves traffic.
type Incumbent func(kind, name string) bool

// Resolve checks cfg as a whole and returns what can be served. An object
// with an error is left out alone and reported; everything else goes on.
// Conflicts (duplicate route, two listeners on one VIP:port, one SNI name
// twice on a port, a port that cannot be mapped) reject the newcomer: the
// incumbent first, then by name. The result is deterministic.
func Resolve(cfg Config, incumbent Incumbent) Resolved {
	if incumbent == nil {
		incumbent = func(string, string) bool { return false }
	}
	var r Resolved
	certs := map[string]bool{}
	for _, c := range sortedBy(cfg.Certificates, func(c Certificate) string { return c.Name }) {
		switch {
		case certs[c.Name]:
			r.Problems = append(r.Problems, Problem{Kind: "certificate", Name: c.Name, Origin: c.Origin, Field: "name", Msg: "declared twice", Rejected: true})
		case len(c.Chain) == 0 || c.Key.Empty():
			r.Problems = append(r.Problems, Problem{Kind: "certificate", Name: c.Name, Origin: c.Origin, Field: "key", Msg: "certificate chain and key are both required", Rejected: true})
		default:
			certs[c.Name] = true
			r.Config.Certificates = append(r.Config.Certificates, c)
		}
	}
	r.Config.Services = resolveServices(cfg.Services, incumbent, &r.Problems)
	clusters := map[string]string{} // cluster -> group
	for _, s := range r.Config.Services {
		for _, u := range s.Upstreams {
			clusters[ClusterName(s.Name, u.Name)] = s.Group
		}
	}
	r.Config.Gateways, r.Listeners = resolveGateways(cfg.Gateways, certs, clusters, incumbent, &r.Problems)
	return r
}

func incumbentsFirst[T any](items []T, kind string, name func(T) string, incumbent Incumbent) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int {
		ia, ib := incumbent(kind, name(a)), incumbent(kind, name(b))
		if ia != ib {
			if ia {
				return -1
			}
			return 1
		}
		return cmp.Compare(name(a), name(b))
	})
	return out
}

func sortedBy[T any](items []T, key func(T) string) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return out
}

// RouteKey identifies what a route matches, to find duplicates.
func routeKey(group, host string, r Route) string {
	hs := make([]string, 0, len(r.Headers))
	for _, h := range r.Headers {
		hs = append(hs, fmt.Sprintf("%s=%q/%v", h.Name, h.Exact, h.Present))
	}
	slices.Sort(hs)
	m := "prefix:" + r.Prefix
	if r.Regex != "" {
		m = "regex:" + r.Regex
	}
	return group + "|" + host + "|" + m + "|" + strings.Join(hs, ",")
}

// ServiceHosts returns the hosts of a service, "*" when it names none.
func ServiceHosts(s Service) []string {
	if len(s.Hosts) == 0 {
		return []string{"*"}
	}
	return s.Hosts
}

type routeOwner struct {
	service string
	origin  Origin
	route   int
}

func resolveServices(in []Service, incumbent Incumbent, problems *[]Problem) []Service {
	var out []Service
	names := map[string]Origin{}
	routes := map[string]routeOwner{}
	for _, s := range incumbentsFirst(in, "service", func(s Service) string { return s.Name }, incumbent) {
		if ps := checkService(s); len(ps) > 0 {
			*problems = append(*problems, ps...)
			continue
		}
		if o, dup := names[s.Name]; dup {
			*problems = append(*problems, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: "name", Msg: fmt.Sprintf("service %q is already declared in %s", s.Name, o), Rejected: true})
			continue
		}
		var conflicts []Problem
		mine := map[string]int{}
		for i, rt := range s.Routes {
			for _, h := range ServiceHosts(s) {
				k := routeKey(s.Group, h, rt)
				if j, ok := mine[k]; ok {
					conflicts = append(conflicts, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: fmt.Sprintf("routes[%d]", i), Msg: fmt.Sprintf("duplicate route: routes[%d] already matches the same requests for host %q", j, h), Rejected: true})
					continue
				}
				mine[k] = i
				if o, taken := routes[k]; taken {
					conflicts = append(conflicts,
						Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: fmt.Sprintf("routes[%d]", i), Msg: fmt.Sprintf("duplicate route: service %q (%s) routes[%d] already matches the same requests for host %q", o.service, o.origin, o.route, h), Rejected: true},
						Problem{Kind: "service", Name: o.service, Origin: o.origin, Field: fmt.Sprintf("routes[%d]", o.route), Msg: fmt.Sprintf("duplicate route: service %q (%s) routes[%d] matches the same requests for host %q and was rejected", s.Name, s.Origin, i, h)})
				}
			}
		}
		if len(conflicts) > 0 {
			*problems = append(*problems, conflicts...)
			continue
		}
		names[s.Name] = s.Origin
		for i, rt := range s.Routes {
			for _, h := range ServiceHosts(s) {
				routes[routeKey(s.Group, h, rt)] = routeOwner{service: s.Name, origin: s.Origin, route: i}
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Service) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
