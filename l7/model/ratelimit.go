package model

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/tlbproject/tlb/l7/ratelimit"
)

// RouteID identifies a service's i-th route within its gateway group:
// service/name for a named route, else service/index. Service names are
// unique in a group, so the identifier is too, and it is stable as long as
// the route keeps its name (or, unnamed, its place). It is the route's name
// in Envoy and the route descriptor of its global rate limits.
func RouteID(service string, i int, r Route) string {
	if r.Name != "" {
		return service + "/" + r.Name
	}
	return fmt.Sprintf("%s/%d", service, i)
}

// EffectiveRateLimit returns a route's limits: its own, else its
// service's; nil for none.
func EffectiveRateLimit(s Service, r Route) *ratelimit.RouteLimits {
	if r.RateLimit != nil {
		return r.RateLimit
	}
	return s.RateLimit
}

// RouteLimits returns the effective limits of a service's i-th route with
// its identifier, RouteID; the zero value when the route has none.
func RouteLimits(s Service, i int) ratelimit.RouteLimits {
	r := s.Routes[i]
	l := EffectiveRateLimit(s, r)
	if l == nil {
		return ratelimit.RouteLimits{}
	}
	out := *l
	out.Route = RouteID(s.Name, i, r)
	return out
}

// GroupRateLimits is the rate limit service's configuration of a group:
// the global limits of the routes of its resolved services, each named by
// RouteID, as the translator names their descriptors.
func GroupRateLimits(r Resolved, group string) (ratelimit.ServiceConfig, error) {
	var routes []ratelimit.RouteLimits
	for _, s := range r.Config.Services {
		if s.Group != group {
			continue
		}
		for i := range s.Routes {
			if l := RouteLimits(s, i); l.Global != nil {
				routes = append(routes, l)
			}
		}
	}
	return ratelimit.Service(group, routes)
}

// checkRateLimits adds the field errors of the service's limits and its
// routes', as l7/ratelimit validates them (the one validator); a route
// identifier l7/ratelimit refuses is reported on the route's name. A
// global limit is kept but reported (warn, noRateLimitService); Resolve
// drops that warning when the operator configured a rate limit service
// (Options.RateLimitService), and the translator serves the limit.
func checkRateLimits(s Service, bad, warn func(field, format string, a ...any)) {
	check := func(l *ratelimit.RouteLimits, f string) {
		if l == nil {
			return
		}
		c := *l
		c.Route = "r" // the identifier is checked per route below
		for _, fe := range fieldErrors(c.Validate()) {
			bad(f+"."+fe.Field, "%s", fe.Msg)
		}
		if l.Global != nil {
			warn(f+".global", "%s", noRateLimitService)
		}
	}
	check(s.RateLimit, "rateLimit")
	for i, r := range s.Routes {
		check(r.RateLimit, fmt.Sprintf("routes[%d].rateLimit", i))
		if EffectiveRateLimit(s, r) == nil {
			continue
		}
		id := ratelimit.RouteLimits{Route: RouteID(s.Name, i, r)}
		for _, fe := range fieldErrors(id.Validate()) {
			bad(fmt.Sprintf("routes[%d].name", i), "rate limit route identifier %s", fe.Msg)
		}
	}
}

// fieldErrors unpacks the *ratelimit.FieldError of a Validate error.
func fieldErrors(err error) []*ratelimit.FieldError {
	var out []*ratelimit.FieldError
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	for _, e := range j.Unwrap() {
		var fe *ratelimit.FieldError
		if errors.As(e, &fe) {
			out = append(out, fe)
		}
	}
	return out
}

// noRateLimitService is the warning on a global limit of a service that
// no rate limit service enforces.
const noRateLimitService = "no rate limit service is configured: the global limit is not enforced"

// RateLimitService is where the gateways of a group reach the rate limit
// service (envoyproxy/ratelimit): a host name Envoy resolves (a
// Kubernetes Service) or an IP, and its gRPC port.
type RateLimitService struct {
	Host string
	Port uint32
}

// String returns host:port.
func (s RateLimitService) String() string {
	return net.JoinHostPort(s.Host, strconv.FormatUint(uint64(s.Port), 10))
}

// ParseRateLimitService parses the operator's HOST:PORT.
func ParseRateLimitService(addr string) (*RateLimitService, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("rate limit service %q: want HOST:PORT: %w", addr, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return nil, fmt.Errorf("rate limit service %q: port %q is not 1-65535", addr, port)
	}
	if net.ParseIP(host) == nil && (host == "" || host[0] == '*' || checkHost(host) != nil) {
		return nil, fmt.Errorf("rate limit service %q: host %q is neither a DNS name nor an IP", addr, host)
	}
	return &RateLimitService{Host: host, Port: uint32(p)}, nil
}

// withRateLimitService drops the noRateLimitService warnings of ps when
// opts names a rate limit service: the global limits are served.
func withRateLimitService(ps []Problem, opts Options) []Problem {
	if opts.RateLimitService == nil {
		return ps
	}
	out := ps[:0:0]
	for _, p := range ps {
		if !p.Rejected && p.Msg == noRateLimitService {
			continue
		}
		out = append(out, p)
	}
	return out
}
