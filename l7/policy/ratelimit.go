package policy

import (
	"math"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// RateLimit converts a rateLimit block; nil stays nil. The limits'
// values are checked by model.CheckService (with l7/ratelimit).
func RateLimit(in *api.RateLimit) (*ratelimit.RouteLimits, error) {
	if in == nil {
		return nil, nil
	}
	var es Errors
	l := &ratelimit.RouteLimits{}
	if in.Local != nil {
		l.Local = &ratelimit.Local{RequestsPerSecond: in.Local.RequestsPerSecond,
			Burst: es.uint32("local.burst", in.Local.Burst)}
	}
	if g := in.Global; g != nil {
		l.Global = &ratelimit.Global{PerClientIP: es.quota("global.perClientIP", g.PerClientIP),
			PerRoute: es.quota("global.perRoute", g.PerRoute)}
	}
	return l, es.err()
}

func (es *Errors) quota(field string, q *api.RateLimitQuota) *ratelimit.Quota {
	if q == nil {
		return nil
	}
	return &ratelimit.Quota{Requests: es.uint32(field+".requests", q.Requests), Unit: ratelimit.Unit(q.Unit)}
}

// uint32 reads a count that must fit the model's 32 bits.
func (es *Errors) uint32(field string, n int64) uint32 {
	switch {
	case n < 0:
		es.add(field, "must not be negative")
		return 0
	case n > math.MaxUint32:
		es.add(field, "must be at most %d", uint64(math.MaxUint32))
		return 0
	}
	return uint32(n)
}
