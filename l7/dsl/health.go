package dsl

import (
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
)

// health fills the upstream's health settings from u; f is its field
// path ("upstreams[0]").
func (u *upstreamDoc) health(mu *model.Upstream, f string, errs *[]error, file string) {
	var err error
	mu.HealthCheck, err = policy.HealthCheck(u.HealthCheck)
	policyErrs(file, f+".healthCheck", err, errs)
	mu.OutlierDetection, err = policy.OutlierDetection(u.OutlierDetection)
	policyErrs(file, f+".outlierDetection", err, errs)
	mu.CircuitBreakers = policy.CircuitBreakers(u.CircuitBreakers)
	mu.SlowStart, err = policy.SlowStart(u.SlowStart)
	policyErrs(file, f+".slowStart", err, errs)
}
