package model

import (
	"errors"
	"fmt"

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

// checkRateLimit adds the field errors of a route's limits at field f, as
// l7/ratelimit validates them; the route identifier is reported on the
// route's name. A global limit is kept but reported: no rate limit service
// is configured for any group yet, so the translator leaves it out.
func checkRateLimit(s Service, i int, f string, bad func(field, format string, a ...any), warn func(field, format string, a ...any)) {
	if s.Routes[i].RateLimit == nil {
		return
	}
	l := RouteLimits(s, i)
	err := l.Validate()
	var fes []*ratelimit.FieldError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			var fe *ratelimit.FieldError
			if errors.As(e, &fe) {
				fes = append(fes, fe)
			}
		}
	}
	for _, fe := range fes {
		if fe.Field == "route" {
			bad(f+".name", "rate limit route identifier %s", fe.Msg)
			continue
		}
		bad(f+".rateLimit."+fe.Field, "%s", fe.Msg)
	}
	if l.Global != nil {
		warn(f+".rateLimit.global", "no rate limit service is configured: the global limit is not enforced")
	}
}

// RouteLimits returns the limits of a service's i-th route with its
// identifier, RouteID; the zero value when the route has none.
func RouteLimits(s Service, i int) ratelimit.RouteLimits {
	r := s.Routes[i]
	if r.RateLimit == nil {
		return ratelimit.RouteLimits{}
	}
	l := *r.RateLimit
	l.Route = RouteID(s.Name, i, r)
	return l
}
