package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// HealthCheck converts an upstream's healthCheck block; nil stays nil.
func HealthCheck(in *api.HealthCheck) (*model.HealthCheck, error) {
	if in == nil {
		return nil, nil
	}
	var es Errors
	m := &model.HealthCheck{
		UnhealthyThreshold: in.UnhealthyThreshold,
		HealthyThreshold:   in.HealthyThreshold,
		Interval:           es.orOff("interval", in.Interval),
		Timeout:            es.orOff("timeout", in.Timeout),
	}
	n := 0
	if in.HTTP != nil {
		n++
		m.Protocol, m.Path, m.Host = model.HealthHTTP, in.HTTP.Path, in.HTTP.Host
		for j, r := range in.HTTP.ExpectedStatuses {
			sr, ok := statusRange(r)
			if !ok {
				es.add(fmt.Sprintf("http.expectedStatuses[%d]", j), "want a status such as 200 or a range such as \"200-299\", got %q", string(r))
			}
			m.ExpectedStatuses = append(m.ExpectedStatuses, sr)
		}
	}
	if in.TCP != nil {
		n++
		m.Protocol = model.HealthTCP
	}
	if in.GRPC != nil {
		n++
		m.Protocol, m.GRPCService, m.Host = model.HealthGRPC, in.GRPC.Service, in.GRPC.Host
	}
	if n != 1 {
		es.add("", "set exactly one of http, tcp and grpc")
	}
	if m.Interval < 0 || m.Timeout < 0 {
		es.add("", "interval and timeout cannot be off")
	}
	return m, es.err()
}

// statusRange parses one entry of expectedStatuses, or ok false.
func statusRange(r api.StatusRange) (_ model.StatusRange, ok bool) {
	lo, hi, isRange := strings.Cut(string(r), "-")
	if !isRange {
		hi = lo
	}
	from, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 32)
	to, err2 := strconv.ParseUint(strings.TrimSpace(hi), 10, 32)
	if err1 != nil || err2 != nil {
		return model.StatusRange{}, false
	}
	return model.StatusRange{Min: uint32(from), Max: uint32(to)}, true
}

// OutlierDetection converts an upstream's outlierDetection block; nil is
// the default (on).
func OutlierDetection(in *api.OutlierDetection) (model.OutlierDetection, error) {
	if in == nil {
		return model.OutlierDetection{}, nil
	}
	var es Errors
	m := model.OutlierDetection{
		Disabled:                  in.Disabled,
		Consecutive5xx:            in.Consecutive5xx,
		ConsecutiveGatewayFailure: in.ConsecutiveGatewayFailure,
		Interval:                  es.orOff("interval", in.Interval),
		BaseEjectionTime:          es.orOff("baseEjectionTime", in.BaseEjectionTime),
		MaxEjectionPercent:        in.MaxEjectionPercent,
	}
	if m.Interval < 0 || m.BaseEjectionTime < 0 {
		es.add("", "interval and baseEjectionTime cannot be off; set disabled: true to turn outlier detection off")
	}
	return m, es.err()
}

// CircuitBreakers converts an upstream's circuitBreakers block; nil is
// the defaults.
func CircuitBreakers(in *api.CircuitBreakers) model.CircuitBreakers {
	if in == nil {
		return model.CircuitBreakers{}
	}
	return model.CircuitBreakers(*in)
}

// SlowStart reads an upstream's slowStart: a positive duration or "off"
// (Off); nil is zero (the default window).
func SlowStart(v *string) (time.Duration, error) {
	var es Errors
	d := es.orOff("", v)
	return d, es.err()
}
