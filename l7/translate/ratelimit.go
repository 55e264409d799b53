package translate

import (
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate/ratelimitenvoy"
)

// LocalRateLimitFilter is the HTTP filter name of Envoy's local rate limit
// filter, the key of its per-route token buckets.
const LocalRateLimitFilter = ratelimitenvoy.LocalFilterName

// hasLocalRateLimit reports whether a route of svcs has a local limit.
// Global limits are not served: no group has a rate limit service yet, and
// model reports them as kept problems.
func hasLocalRateLimit(svcs []model.Service) bool {
	for _, s := range svcs {
		for _, r := range s.Routes {
			if l := model.EffectiveRateLimit(s, r); l != nil && l.Local != nil {
				return true
			}
		}
	}
	return false
}

// localRateLimitPerRoute is the route's (or its service's) token bucket per client IP, nil
// when it has no local limit (the inert filter then passes it by).
func localRateLimitPerRoute(s model.Service, r model.Route) *anypb.Any {
	l := model.EffectiveRateLimit(s, r)
	if l == nil || l.Local == nil {
		return nil
	}
	return mustAny(ratelimitenvoy.LocalPerRoute(*l.Local))
}
