package model

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Resolved is a Config after the whole-config checks: only the accepted
// objects, one Envoy listener per VIP:port with the services served on it,
// and the problems found. It is what the translators consume.
type Resolved struct {
	Config    Config
	Listeners []EnvoyListener
	Problems  []Problem
	// DNSResolvers are Options.DNSResolvers, for the translators.
	DNSResolvers []netip.AddrPort
}

// Options are the operator's rules for Resolve.
type Options struct {
	// CatchAllNamespaces may serve the catch-all host "*" (the DSL always
	// may). Everyone else must name their hosts.
	CatchAllNamespaces []string
	// RateLimitService is where the group's gateways reach the rate limit
	// service that enforces global limits; nil: none, global limits are
	// kept but reported and not served.
	RateLimitService *RateLimitService
	// DNSResolvers are the DNS servers gateways ask for the names of DNS
	// upstreams (and of other clusters named by DNS); empty: the system's
	// resolver configuration (/etc/resolv.conf, in Kubernetes the pod's).
	DNSResolvers []netip.AddrPort
}

// Resolve checks cfg as a whole and returns what can be served. An object
// with an error is left out alone and reported; everything else goes on.
// Resolve is a pure function of cfg and opts: every conflict (a host owned
// by another namespace, a duplicate route, two listeners on one VIP:port)
// is settled by claim order — creation time, then the load at which the
// DSL directory first saw the file, then origin (Kubernetes
// namespace/name, DSL file path), then name — so every replica that sees
// the same inputs serves the same thing.
func Resolve(cfg Config, opts Options) Resolved {
	return resolve(cfg, opts, func(s *Service) *serviceFacts { return factsOf(s, opts) })
}

// resolve is Resolve, with what each service taken alone yields from facts.
func resolve(cfg Config, opts Options, facts func(*Service) *serviceFacts) Resolved {
	r := Resolved{DNSResolvers: opts.DNSResolvers}
	owned := ownedCertificates(cfg.Certificates, &r.Problems)
	var decl declarations
	r.Config.Interceptors, decl = acceptCatalogs(cfg.Interceptors, &r.Problems)
	r.Config.Services = resolveServices(resolveInterceptors(cfg.Services, decl, &r.Problems), opts, &r.Problems, facts)
	clusters := map[string]string{} // cluster -> group
	for _, s := range r.Config.Services {
		for _, u := range s.Upstreams {
			clusters[ClusterName(s.Name, u.Name)] = s.Group
		}
	}
	r.Config.Gateways, r.Config.Certificates = resolveGateways(cfg.Gateways, owned, clusters, &r.Problems)
	r.Listeners = attach(r.Config.Gateways, r.Config.Services, &r.Problems)
	for i := range r.Listeners {
		r.Listeners[i].RateLimitService = opts.RateLimitService
	}
	return r
}

// claimer is what claim order reads of a Service or Gateway.
type claimer interface {
	claim() (created time.Time, firstLoad uint64, origin Origin, name string)
}

func (s Service) claim() (time.Time, uint64, Origin, string) {
	return s.Created, s.FirstLoad, s.Origin, s.Name
}

func (g Gateway) claim() (time.Time, uint64, Origin, string) {
	return g.Created, g.FirstLoad, g.Origin, g.Name
}

// claimOrder sorts objects by who claimed first: creation time, then the
// directory load that first saw a DSL file, then origin, then name.
func claimOrder[T claimer](items []T) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int {
		ca, la, oa, na := a.claim()
		cb, lb, ob, nb := b.claim()
		return cmp.Or(ca.Compare(cb), cmp.Compare(la, lb), cmp.Compare(oa, ob), cmp.Compare(na, nb))
	})
	return out
}

// routeKey identifies what a route matches, to find duplicates.
// Everything a route matches on is in it: path kind and value, method,
// header exact/regex/presence and query matches.
func routeKey(group, host string, r Route) string {
	hs := make([]string, 0, len(r.Headers)+len(r.Queries))
	for _, h := range r.Headers {
		hs = append(hs, fmt.Sprintf("%s=%q/%q/%v", h.Name, h.Exact, h.Regex, h.Present))
	}
	for _, q := range r.Queries {
		hs = append(hs, fmt.Sprintf("?%s=%q/%q", q.Name, q.Exact, q.Regex))
	}
	slices.Sort(hs)
	m := "prefix:" + r.Prefix
	switch {
	case r.Regex != "":
		m = "regex:" + r.Regex
	case r.Exact != "":
		m = "exact:" + r.Exact
	case r.SegmentPrefix && r.Prefix != "/":
		m = "segment:" + strings.TrimSuffix(r.Prefix, "/")
	}
	return group + "|" + host + "|" + m + "|" + r.Method + "|" + strings.Join(hs, ",")
}

// ServiceHosts returns the hosts of a service, "*" when it names none.
func ServiceHosts(s Service) []string {
	if len(s.Hosts) == 0 {
		return []string{"*"}
	}
	return s.Hosts
}

func hasRejection(ps []Problem) bool {
	for _, p := range ps {
		if p.Rejected {
			return true
		}
	}
	return false
}
