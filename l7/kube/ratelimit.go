package kube

import (
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/policy"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// rateLimit reads tlb.io/l7-rate-limit (api.RateLimit); the values are
// checked with the service (model.CheckService, by l7/ratelimit).
func (a annotations) rateLimit() *ratelimit.RouteLimits {
	var in api.RateLimit
	if !a.decode(api.AnnotationL7RateLimit, `{"local":{"requestsPerSecond":10,"burst":20}}`, &in) {
		return nil
	}
	l, err := policy.RateLimit(&in)
	if !a.policyErrs(api.AnnotationL7RateLimit, "", err) {
		return nil
	}
	return l
}
