package ratelimit_test

import (
	"fmt"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlcommon "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
)

// envoyDescriptors computes the descriptors Envoy sends to the rate limit
// service for a request from clientIP on a route with these rate_limits,
// as Envoy's router does (one descriptor per RateLimit, one entry per
// action; an action that cannot produce its entry drops the descriptor).
// It knows the two actions this package emits and refuses any other, so a
// new action cannot slip past the tests of the real service.
func envoyDescriptors(limits []*route.RateLimit, clientIP string) ([]*rlcommon.RateLimitDescriptor, error) {
	var out []*rlcommon.RateLimitDescriptor
	for _, l := range limits {
		d := &rlcommon.RateLimitDescriptor{}
		for _, a := range l.GetActions() {
			switch s := a.GetActionSpecifier().(type) {
			case *route.RateLimit_Action_GenericKey_:
				key := s.GenericKey.GetDescriptorKey()
				if key == "" {
					key = "generic_key" // Envoy's default descriptor key
				}
				d.Entries = append(d.Entries, &rlcommon.RateLimitDescriptor_Entry{Key: key, Value: s.GenericKey.GetDescriptorValue()})
			case *route.RateLimit_Action_RemoteAddress_:
				d.Entries = append(d.Entries, &rlcommon.RateLimitDescriptor_Entry{Key: "remote_address", Value: clientIP})
			default:
				return nil, fmt.Errorf("action %T is not modelled by this test", s)
			}
		}
		out = append(out, d)
	}
	return out, nil
}
