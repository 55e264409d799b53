package configserver

import (
	rlsconf "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"

	"github.com/tlbproject/tlb/l7/ratelimit"
)

// Resource is c as the xDS resource the rate limit service fetches when run
// with CONFIG_TYPE=GRPC_XDS_SOTW (type
// ratelimit.config.ratelimit.v3.RateLimitConfig), named after its domain.
// It carries the same tree as YAML, so either delivery gives the service
// the same limits. l7 serves it (Server, wired by l7 serve
// --ratelimit-xds-listen); docs/ratelimit.md says why.
func Resource(c ratelimit.ServiceConfig) *rlsconf.RateLimitConfig {
	return &rlsconf.RateLimitConfig{Name: c.Domain, Domain: c.Domain, Descriptors: protoDescriptors(c.Descriptors)}
}

func protoDescriptors(ds []ratelimit.ServiceDescriptor) []*rlsconf.RateLimitDescriptor {
	var out []*rlsconf.RateLimitDescriptor
	for _, d := range ds {
		p := &rlsconf.RateLimitDescriptor{Key: d.Key, Value: d.Value, Descriptors: protoDescriptors(d.Descriptors)}
		if d.RateLimit != nil {
			p.RateLimit = &rlsconf.RateLimitPolicy{Unit: protoUnit(d.RateLimit.Unit), RequestsPerUnit: d.RateLimit.RequestsPerUnit}
		}
		out = append(out, p)
	}
	return out
}

func protoUnit(u ratelimit.Unit) rlsconf.RateLimitUnit {
	switch u {
	case ratelimit.Second:
		return rlsconf.RateLimitUnit_SECOND
	case ratelimit.Minute:
		return rlsconf.RateLimitUnit_MINUTE
	case ratelimit.Hour:
		return rlsconf.RateLimitUnit_HOUR
	}
	return rlsconf.RateLimitUnit_UNKNOWN
}
