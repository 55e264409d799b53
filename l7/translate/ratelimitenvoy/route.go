package ratelimitenvoy

import (
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/ratelimit"
)

// Apply adds the limits of l to a built route: the local filter's
// per-route configuration when l has a local limit, and the global
// actions when it has a global one. A route without limits is left
// untouched, so both filters pass it by. r must be a forwarding route
// (rate_limits live on its RouteAction); Apply on a redirect or a direct
// response sets only the local limit.
func Apply(r *route.Route, l ratelimit.RouteLimits) {
	if l.Local != nil {
		if r.TypedPerFilterConfig == nil {
			r.TypedPerFilterConfig = map[string]*anypb.Any{}
		}
		r.TypedPerFilterConfig[LocalFilterName] = mustAny(LocalPerRoute(*l.Local))
	}
	if a := r.GetRoute(); a != nil {
		a.RateLimits = append(a.RateLimits, RouteRateLimits(l)...)
	}
}

func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		// anypb.New fails only for a nil or unregistered message, which
		// would be a bug in this package.
		panic("ratelimitenvoy: pack " + string(proto.MessageName(m)) + ": " + err.Error())
	}
	return a
}
