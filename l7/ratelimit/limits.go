package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Unit is the window of a global limit, as the rate limit service counts
// it: a fixed window aligned to the clock (a per-minute limit resets at
// every full minute).
type Unit string

// The units a global limit may use.
const (
	Second Unit = "second"
	Minute Unit = "minute"
	Hour   Unit = "hour"
)

// seconds is the length of the window.
func (u Unit) seconds() int64 {
	switch u {
	case Second:
		return 1
	case Minute:
		return 60
	case Hour:
		return 3600
	}
	return 0
}

// RouteLimits are the limits of one route.
type RouteLimits struct {
	// Route identifies the route within its gateway group; it is the value
	// of the route descriptor sent to the rate limit service, so it must be
	// stable across rebuilds (the translator's route name is).
	Route string
	// Local is the per-gateway, per-client-IP token bucket; nil for none.
	Local *Local
	// Global is the limit shared by every gateway of the group; nil for none.
	Global *Global
}

// Local is a token bucket per client IP on one gateway: a client may send
// Burst requests at once, then RequestsPerSecond on average.
type Local struct {
	// RequestsPerSecond is the refill rate, at most three decimals
	// (0.5 is one request every two seconds).
	RequestsPerSecond float64
	// Burst is the size of the bucket: the requests a client may send at
	// once after being idle.
	Burst uint32
}

// Global is a limit shared by every gateway of a group; either or both of
// its quotas may be set.
type Global struct {
	// PerClientIP counts each client address on this route on its own.
	PerClientIP *Quota
	// PerRoute counts every request to this route, whoever sends it.
	PerRoute *Quota
}

// Quota is Requests per Unit, counted in a fixed window.
type Quota struct {
	Requests uint32
	Unit     Unit
}

// FieldError is a validation error that names the field at fault, as a
// path the DSL can prefix with its file and route.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// routeName is what a route identifier may hold: it travels as a descriptor
// value and as part of Redis keys, so keep it printable and short.
var routeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$`)

// Validate checks the limits of one route and returns every problem, each
// a *FieldError naming its field (local.requestsPerSecond, global.perRoute.unit...).
func (l RouteLimits) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !routeName.MatchString(l.Route) {
		bad("route", "%q is not a route identifier (letters, digits, . _ : / -, at most 200)", l.Route)
	}
	if l.Local != nil {
		rps := l.Local.RequestsPerSecond
		switch {
		case math.IsNaN(rps) || rps <= 0:
			bad("local.requestsPerSecond", "must be greater than 0, got %v", rps)
		case rps > maxRequestsPerSecond:
			bad("local.requestsPerSecond", "must be at most %d, got %v", maxRequestsPerSecond, rps)
		case milli(rps) < 0:
			bad("local.requestsPerSecond", "at most three decimals, got %v", rps)
		}
		if l.Local.Burst == 0 {
			bad("local.burst", "must be at least 1")
		}
	}
	if g := l.Global; g != nil {
		if g.PerClientIP == nil && g.PerRoute == nil {
			bad("global", "needs perClientIP, perRoute or both")
		}
		for name, q := range map[string]*Quota{"global.perClientIP": g.PerClientIP, "global.perRoute": g.PerRoute} {
			if q == nil {
				continue
			}
			if q.Requests == 0 {
				bad(name+".requests", "must be at least 1")
			}
			if q.Unit.seconds() == 0 {
				bad(name+".unit", "must be second, minute or hour, got %q", q.Unit)
			}
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// ValidateGroup checks the limits of every route of one gateway group:
// each on its own, and that no two share a route identifier (they would
// share counters in the rate limit service).
func ValidateGroup(routes []RouteLimits) error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range routes {
		if err := r.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("routes[%d]: %w", i, err))
		}
		if seen[r.Route] {
			errs = append(errs, fmt.Errorf("routes[%d]: %w", i, &FieldError{Field: "route", Msg: fmt.Sprintf("%q is used by another route of the group", r.Route)}))
		}
		seen[r.Route] = true
	}
	return errors.Join(errs...)
}
