package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Host ownership. A host of a group belongs to the namespace of the first
// service that claims it (claim order, see Resolve). Services of the
// owner's namespace may add routes under it; a service of another
// namespace only prefix routes under a prefix that a service of the owner
// delegated to its namespace. The catch-all "*" is the operator's, or a
// listed namespace's.

// hostOwner is the first claimant of a host.
type hostOwner struct {
	namespace string
	service   string
	origin    Origin
}

// ownership is what the first pass over the services learns: who owns
// each host and what the owners delegate.
type ownership struct {
	owners      map[string]hostOwner    // group|host -> owner
	delegations map[string][]Delegation // group|host -> delegations of the owner's namespace
}

func hostKey(group, host string) string { return group + "|" + host }

// learnOwners records s as the owner of its hosts (keys: hostKey of
// each of ServiceHosts(s)) that nobody claimed before. The claimants are
// walked in claim order, every service whose name, group and hosts are
// valid, even one rejected for another reason, so an owner whose service
// is broken for a while keeps its hosts.
func (o ownership) learnOwners(s *Service, keys []string) {
	if s.GatewayAPI {
		return // claims nothing: allowedRoutes governs it
	}
	for _, k := range keys {
		if _, ok := o.owners[k]; !ok {
			o.owners[k] = hostOwner{namespace: s.Namespace, service: s.Name, origin: s.Origin}
		}
	}
}

// learnDelegations records the delegations of s on the hosts its
// namespace owns, once every owner is known.
func (o ownership) learnDelegations(s *Service, keys []string) {
	if s.GatewayAPI || len(s.Delegations) == 0 {
		return
	}
	for _, k := range keys {
		if o.owners[k].namespace == s.Namespace {
			o.delegations[k] = append(o.delegations[k], s.Delegations...)
		}
	}
}

// check returns the problems of a service's claims on hosts it does not
// own: every route must be a prefix route under a prefix delegated to its
// namespace. A Gateway API service has none: the Gateway's allowedRoutes
// decided which namespaces may attach to its listeners.
func (o ownership) check(s *Service, keys []string) []Problem {
	if s.GatewayAPI {
		return nil
	}
	var ps []Problem
	for hi, h := range ServiceHosts(*s) {
		k := keys[hi]
		owner := o.owners[k]
		if owner.namespace == s.Namespace {
			continue
		}
		field := "hosts"
		if len(s.Hosts) > 0 {
			field = fmt.Sprintf("hosts[%d]", hi)
		}
		for ri, rt := range s.Routes {
			if rt.Regex == "" && delegated(o.delegations[k], rt.Prefix+rt.Exact, s.Namespace) {
				continue
			}
			what := fmt.Sprintf("routes[%d] (prefix %q)", ri, rt.Prefix)
			if rt.Exact != "" {
				what = fmt.Sprintf("routes[%d] (exact path %q)", ri, rt.Exact)
			}
			if rt.Regex != "" {
				what = fmt.Sprintf("routes[%d] (a pattern; only prefix routes can be delegated)", ri)
			}
			ps = append(ps, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: field, Rejected: true,
				Msg: fmt.Sprintf("host %q belongs to namespace %s (service %q, %s), which has not delegated %s to namespace %s",
					h, nsName(owner.namespace), owner.service, owner.origin, what, nsName(s.Namespace))})
		}
	}
	return ps
}

// delegated reports whether prefix lies under a delegation to namespace.
func delegated(ds []Delegation, prefix, namespace string) bool {
	for _, d := range ds {
		if strings.HasPrefix(prefix, d.Prefix) && (slices.Contains(d.Namespaces, namespace) || slices.Contains(d.Namespaces, "*")) {
			return true
		}
	}
	return false
}

func nsName(ns string) string {
	if ns == Operator {
		return "(operator, DSL)"
	}
	return fmt.Sprintf("%q", ns)
}

// claimsHosts reports whether a service's claim on its hosts counts: its
// name, group and hosts are valid (and, checked by the caller, it may use
// the catch-all if it names it).
func claimsHosts(s Service) bool {
	if checkName(s.Name) != nil || checkName(s.Group) != nil {
		return false
	}
	for _, h := range s.Hosts {
		if checkHost(h) != nil {
			return false
		}
	}
	return true
}

// catchAll returns a problem when a service claims "*" from a namespace
// the operator did not list. A Gateway API service may: "*" is then the
// hosts of the listeners it attached to, and it is served nowhere else.
func catchAll(s Service, allowed []string) []Problem {
	if s.GatewayAPI || s.Namespace == Operator || slices.Contains(allowed, s.Namespace) || !slices.Contains(ServiceHosts(s), "*") {
		return nil
	}
	return []Problem{{Kind: "service", Name: s.Name, Origin: s.Origin, Field: "hosts", Rejected: true,
		Msg: fmt.Sprintf("the catch-all host \"*\" (also the default when no host is named) is only for namespaces the operator lists, and %s is not one; name the hosts", nsName(s.Namespace))}}
}

type routeOwner struct {
	service string
	origin  Origin
	route   int
}

// resolveServices accepts services in claim order: field errors, duplicate
// names, the catch-all rule, host ownership, then duplicate routes (the
// first claim keeps the route). The result is sorted by name. facts gives
// what is known of each service taken alone (factsOf, or a Resolver's
// memory of it).
func resolveServices(in []Service, opts Options, problems *[]Problem, facts func(*Service) *serviceFacts) []Service {
	type candidate struct {
		s *Service
		f *serviceFacts
	}
	eligible, claimants := make([]candidate, 0, len(in)), make([]candidate, 0, len(in))
	names := make(map[string]Origin, len(in))
	for _, s := range serviceClaimOrder(in) {
		f := facts(s)
		if f.claims {
			claimants = append(claimants, candidate{s, f})
		}
		*problems = append(*problems, f.problems...)
		if anyRejected(f.problems) {
			continue
		}
		if o, dup := names[s.Name]; dup {
			*problems = append(*problems, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: "name", Msg: fmt.Sprintf("service %q is already declared in %s", s.Name, o), Rejected: true})
			continue
		}
		if len(f.catchAll) > 0 {
			*problems = append(*problems, f.catchAll...)
			continue
		}
		names[s.Name] = s.Origin
		eligible = append(eligible, candidate{s, f})
	}
	own := ownership{owners: make(map[string]hostOwner, len(claimants)), delegations: map[string][]Delegation{}}
	for _, c := range claimants {
		own.learnOwners(c.s, c.f.hostKeys)
	}
	for _, c := range claimants {
		own.learnDelegations(c.s, c.f.hostKeys)
	}
	out := make([]Service, 0, len(eligible))
	routes := make(map[string]routeOwner, len(eligible))
	for _, c := range eligible {
		s, f := c.s, c.f
		if ps := own.check(s, f.hostKeys); len(ps) > 0 {
			*problems = append(*problems, ps...)
			continue
		}
		if s.GatewayAPI {
			// Gateway API has no duplicate routes: among equal matches the
			// oldest route's is served first (see translate's hostRoutes),
			// the others stay accepted.
			out = append(out, *s)
			continue
		}
		if conflicts := routeConflicts(s, f.routeKeys, routes); len(conflicts) > 0 {
			*problems = append(*problems, conflicts...)
			continue
		}
		hosts := ServiceHosts(*s)
		for i := range s.Routes {
			for hi := range hosts {
				routes[f.routeKeys[i*len(hosts)+hi]] = routeOwner{service: s.Name, origin: s.Origin, route: i}
			}
		}
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Service) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// routeConflicts returns the problems of a service's routes that match
// what another of its routes, or a route claimed before (routes), matches:
// keys are its routeKeys, route-major.
func routeConflicts(s *Service, keys []string, routes map[string]routeOwner) []Problem {
	var conflicts []Problem
	hosts := ServiceHosts(*s)
	var mine map[string]int
	if len(keys) > 1 {
		mine = make(map[string]int, len(keys))
	}
	for i := range s.Routes {
		for hi, h := range hosts {
			k := keys[i*len(hosts)+hi]
			if j, ok := mine[k]; ok {
				conflicts = append(conflicts, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: fmt.Sprintf("routes[%d]", i), Msg: fmt.Sprintf("duplicate route: routes[%d] already matches the same requests for host %q", j, h), Rejected: true})
				continue
			}
			if mine != nil {
				mine[k] = i
			}
			if o, taken := routes[k]; taken {
				conflicts = append(conflicts, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: fmt.Sprintf("routes[%d]", i), Msg: fmt.Sprintf("duplicate route: service %q (%s) routes[%d] claimed the same requests for host %q first", o.service, o.origin, o.route, h), Rejected: true})
			}
		}
	}
	return conflicts
}
