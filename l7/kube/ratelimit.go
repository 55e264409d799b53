package kube

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tlbproject/tlb/l7/ratelimit"
)

// rateLimitAnnotation is tlb.io/l7-rate-limit: the DSL's rateLimit keys,
// as JSON.
type rateLimitAnnotation struct {
	Local *struct {
		RequestsPerSecond float64 `json:"requestsPerSecond"`
		Burst             uint32  `json:"burst"`
	} `json:"local"`
	Global *struct {
		PerClientIP *quotaAnnotation `json:"perClientIP"`
		PerRoute    *quotaAnnotation `json:"perRoute"`
	} `json:"global"`
}

type quotaAnnotation struct {
	Requests uint32 `json:"requests"`
	Unit     string `json:"unit"`
}

func (q *quotaAnnotation) quota() *ratelimit.Quota {
	if q == nil {
		return nil
	}
	return &ratelimit.Quota{Requests: q.Requests, Unit: ratelimit.Unit(q.Unit)}
}

// parseRateLimit reads tlb.io/l7-rate-limit strictly (unknown keys are
// errors); the values are checked with the service (model.CheckService,
// by l7/ratelimit).
func parseRateLimit(v string) (*ratelimit.RouteLimits, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	var a rateLimitAnnotation
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%q: %w; want JSON such as {\"local\":{\"requestsPerSecond\":10,\"burst\":20}}", v, err)
	}
	l := &ratelimit.RouteLimits{}
	if a.Local != nil {
		l.Local = &ratelimit.Local{RequestsPerSecond: a.Local.RequestsPerSecond, Burst: a.Local.Burst}
	}
	if a.Global != nil {
		l.Global = &ratelimit.Global{PerClientIP: a.Global.PerClientIP.quota(), PerRoute: a.Global.PerRoute.quota()}
	}
	return l, nil
}
