package model

import (
	"cmp"
	"reflect"
	"slices"
	"sync"
)

// serviceFacts are what Resolve learns of one service taken alone: a
// function of the service and the Options, nothing else.
type serviceFacts struct {
	// problems are its field errors (checkService, with the rate limit
	// service rule).
	problems []Problem
	// claims: its claim on its hosts counts (claimsHosts, and the
	// catch-all rule allows it).
	claims bool
	// catchAll is the problem of a catch-all it may not claim.
	catchAll []Problem
	// hostKeys are hostKey of each of ServiceHosts, routeKeys routeKey of
	// each route and host, route-major.
	hostKeys, routeKeys []string
}

func factsOf(s *Service, opts Options) *serviceFacts {
	f := &serviceFacts{problems: withRateLimitService(checkService(*s), opts), catchAll: catchAll(*s, opts.CatchAllNamespaces)}
	f.claims = claimsHosts(*s) && len(f.catchAll) == 0
	hosts := ServiceHosts(*s)
	f.hostKeys = make([]string, len(hosts))
	for i, h := range hosts {
		f.hostKeys[i] = hostKey(s.Group, h)
	}
	f.routeKeys = make([]string, 0, len(s.Routes)*len(hosts))
	for _, rt := range s.Routes {
		for _, h := range hosts {
			f.routeKeys = append(f.routeKeys, routeKey(s.Group, h, rt))
		}
	}
	return f
}

// serviceClaimOrder returns pointers to the services in claim order:
// creation time, then the directory load that first saw a DSL file, then
// origin, then name (claimOrder's).
func serviceClaimOrder(in []Service) []*Service {
	out := make([]*Service, len(in))
	for i := range in {
		out[i] = &in[i]
	}
	slices.SortStableFunc(out, func(a, b *Service) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.FirstLoad, b.FirstLoad), cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// Resolver is Resolve with a memory of the services it resolved: what a
// service taken alone yields (its field checks, which compile every
// regex; its claims; the keys of its hosts and routes) is kept while the
// service stays equal (Service.Equal, against a copy), so a publish
// checks the services that changed, and only the whole-config rules
// (claim order, ownership, duplicates, listeners) walk every service.
// Its result is always Resolve's for the same config and options. A
// Resolver belongs to one caller; it is safe for concurrent use.
type Resolver struct {
	mu    sync.Mutex
	opts  Options
	known map[serviceID]*knownService
	gen   uint64
}

// serviceID is how the Resolver finds a service again; two services with
// the same one (a duplicate) just take turns.
type serviceID struct {
	origin Origin
	name   string
}

type knownService struct {
	svc   Service // a copy (Service.Clone)
	facts *serviceFacts
	used  uint64
}

// NewResolver returns a Resolver with an empty memory.
func NewResolver() *Resolver { return &Resolver{known: map[serviceID]*knownService{}} }

// Resolve is Resolve(cfg, opts).
func (r *Resolver) Resolve(cfg Config, opts Options) Resolved {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !reflect.DeepEqual(opts, r.opts) {
		clear(r.known) // the facts depend on the options
		r.opts = cloneOptions(opts)
	}
	r.gen++
	seen := 0
	res := resolve(cfg, opts, func(s *Service) *serviceFacts {
		seen++
		id := serviceID{s.Origin, s.Name}
		k := r.known[id]
		if k == nil || !k.svc.Equal(s) {
			k = &knownService{svc: s.Clone(), facts: factsOf(s, opts)}
			r.known[id] = k
		}
		k.used = r.gen
		return k.facts
	})
	if len(r.known) > seen {
		for id, k := range r.known {
			if k.used != r.gen {
				delete(r.known, id)
			}
		}
	}
	return res
}

func cloneOptions(o Options) Options {
	o.CatchAllNamespaces = slices.Clone(o.CatchAllNamespaces)
	o.DNSResolvers = slices.Clone(o.DNSResolvers)
	if o.RateLimitService != nil {
		v := *o.RateLimitService
		o.RateLimitService = &v
	}
	return o
}
