package ratelimit

import (
	rlsconf "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
)

// Proto is c as the xDS resource the rate limit service fetches when run
// with CONFIG_TYPE=GRPC_XDS_SOTW (type
// ratelimit.config.ratelimit.v3.RateLimitConfig), named after its domain.
// It carries the same tree as YAML, so either delivery gives the service
// the same limits. l7 serves it (l7/ratelimit/configserver, wired by
// l7 serve --ratelimit-xds-listen); docs/ratelimit.md says why.
func (c ServiceConfig) Proto() *rlsconf.RateLimitConfig {
	return &rlsconf.RateLimitConfig{Name: c.Domain, Domain: c.Domain, Descriptors: protoDescriptors(c.Descriptors)}
}

func protoDescriptors(ds []ServiceDescriptor) []*rlsconf.RateLimitDescriptor {
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

func protoUnit(u Unit) rlsconf.RateLimitUnit {
	switch u {
	case Second:
		return rlsconf.RateLimitUnit_SECOND
	case Minute:
		return rlsconf.RateLimitUnit_MINUTE
	case Hour:
		return rlsconf.RateLimitUnit_HOUR
	}
	return rlsconf.RateLimitUnit_UNKNOWN
}
