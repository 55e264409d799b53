package dsl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbproject/tlb/l7/model"
)

// healthCheckDoc is upstreams[].healthCheck: exactly one of http, tcp and
// grpc, and the timing shared by all three.
type healthCheckDoc struct {
	HTTP               *httpCheckDoc `json:"http,omitempty"`
	TCP                *tcpCheckDoc  `json:"tcp,omitempty"`
	GRPC               *grpcCheckDoc `json:"grpc,omitempty"`
	Interval           *string       `json:"interval,omitempty"`
	Timeout            *string       `json:"timeout,omitempty"`
	UnhealthyThreshold uint32        `json:"unhealthyThreshold,omitempty"`
	HealthyThreshold   uint32        `json:"healthyThreshold,omitempty"`
}

type httpCheckDoc struct {
	Path             string        `json:"path"`
	Host             string        `json:"host,omitempty"`
	ExpectedStatuses []statusRange `json:"expectedStatuses,omitempty"`
}

type tcpCheckDoc struct{}

type grpcCheckDoc struct {
	Service string `json:"service,omitempty"`
	Host    string `json:"host,omitempty"`
}

type outlierDetectionDoc struct {
	Disabled                  bool    `json:"disabled,omitempty"`
	Consecutive5xx            uint32  `json:"consecutive5xx,omitempty"`
	ConsecutiveGatewayFailure uint32  `json:"consecutiveGatewayFailure,omitempty"`
	Interval                  *string `json:"interval,omitempty"`
	BaseEjectionTime          *string `json:"baseEjectionTime,omitempty"`
	MaxEjectionPercent        uint32  `json:"maxEjectionPercent,omitempty"`
}

type circuitBreakersDoc struct {
	MaxConnections     uint32 `json:"maxConnections,omitempty"`
	MaxPendingRequests uint32 `json:"maxPendingRequests,omitempty"`
	MaxRequests        uint32 `json:"maxRequests,omitempty"`
	MaxRetries         uint32 `json:"maxRetries,omitempty"`
}

// statusRange is one entry of expectedStatuses as written: a code (200)
// or a range of codes, both ends included ("200-299"). It is parsed by
// parse, which knows the field path to name in errors.
type statusRange string

// UnmarshalJSON keeps a string's text, or any other value as written, for
// parse to judge.
func (r *statusRange) UnmarshalJSON(b []byte) error {
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	*r = statusRange(s)
	return nil
}

// parse returns the range, or ok false.
func (r statusRange) parse() (_ model.StatusRange, ok bool) {
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

// health fills the upstream's health settings from u; f is its field
// path ("upstreams[0]").
func (u *upstreamDoc) health(mu *model.Upstream, f string, errs *[]error, file string) {
	if hc := u.HealthCheck; hc != nil {
		hf := f + ".healthCheck"
		m := &model.HealthCheck{
			UnhealthyThreshold: hc.UnhealthyThreshold,
			HealthyThreshold:   hc.HealthyThreshold,
			Interval:           parseDuration(hc.Interval, hf+".interval", errs, file),
			Timeout:            parseDuration(hc.Timeout, hf+".timeout", errs, file),
		}
		n := 0
		if hc.HTTP != nil {
			n++
			m.Protocol, m.Path, m.Host = model.HealthHTTP, hc.HTTP.Path, hc.HTTP.Host
			for j, r := range hc.HTTP.ExpectedStatuses {
				sr, ok := r.parse()
				if !ok {
					*errs = append(*errs, &FieldError{File: file, Field: fmt.Sprintf("%s.http.expectedStatuses[%d]", hf, j),
						Msg: fmt.Sprintf("want a status such as 200 or a range such as \"200-299\", got %q", string(r))})
				}
				m.ExpectedStatuses = append(m.ExpectedStatuses, sr)
			}
		}
		if hc.TCP != nil {
			n++
			m.Protocol = model.HealthTCP
		}
		if hc.GRPC != nil {
			n++
			m.Protocol, m.GRPCService, m.Host = model.HealthGRPC, hc.GRPC.Service, hc.GRPC.Host
		}
		if n != 1 {
			*errs = append(*errs, &FieldError{File: file, Field: hf, Msg: "set exactly one of http, tcp and grpc"})
		}
		if m.Interval < 0 || m.Timeout < 0 {
			*errs = append(*errs, &FieldError{File: file, Field: hf, Msg: "interval and timeout cannot be off"})
		}
		mu.HealthCheck = m
	}
	if od := u.OutlierDetection; od != nil {
		of := f + ".outlierDetection"
		mu.OutlierDetection = model.OutlierDetection{
			Disabled:                  od.Disabled,
			Consecutive5xx:            od.Consecutive5xx,
			ConsecutiveGatewayFailure: od.ConsecutiveGatewayFailure,
			Interval:                  parseDuration(od.Interval, of+".interval", errs, file),
			BaseEjectionTime:          parseDuration(od.BaseEjectionTime, of+".baseEjectionTime", errs, file),
			MaxEjectionPercent:        od.MaxEjectionPercent,
		}
		if mu.OutlierDetection.Interval < 0 || mu.OutlierDetection.BaseEjectionTime < 0 {
			*errs = append(*errs, &FieldError{File: file, Field: of, Msg: "interval and baseEjectionTime cannot be off; set disabled: true to turn outlier detection off"})
		}
	}
	if cb := u.CircuitBreakers; cb != nil {
		mu.CircuitBreakers = model.CircuitBreakers(*cb)
	}
	mu.SlowStart = parseDuration(u.SlowStart, f+".slowStart", errs, file)
}
