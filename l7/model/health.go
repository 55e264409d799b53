package model

import (
	"fmt"
	"strings"
	"time"
)

// HealthProtocol is how an active health check probes an endpoint.
type HealthProtocol string

// The kinds of active health check.
const (
	// HealthHTTP sends GET Path and expects a status in ExpectedStatuses.
	HealthHTTP HealthProtocol = "http"
	// HealthTCP only opens a connection.
	HealthTCP HealthProtocol = "tcp"
	// HealthGRPC calls grpc.health.v1.Health/Check.
	HealthGRPC HealthProtocol = "grpc"
)

// HealthCheck is an active health check of every endpoint of an upstream,
// run by each gateway. Zero durations and thresholds mean the translator's
// defaults.
type HealthCheck struct {
	Protocol HealthProtocol
	// Path is the HTTP request path (HTTP only; required).
	Path string
	// Host is the Host header (HTTP) or :authority (gRPC); empty means the
	// service's first host without a wildcard, else the service name.
	Host string
	// ExpectedStatuses lists the healthy HTTP statuses; empty means the
	// default (200-399).
	ExpectedStatuses []StatusRange
	// GRPCService is the service name asked about (gRPC only); empty asks
	// about the server as a whole.
	GRPCService        string
	Interval           time.Duration
	Timeout            time.Duration
	UnhealthyThreshold uint32
	HealthyThreshold   uint32
}

// StatusRange is a range of HTTP status codes, both ends included.
type StatusRange struct {
	Min, Max uint32
}

// String formats the range as "200-299", or "200" for one code.
func (r StatusRange) String() string {
	if r.Min == r.Max {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

// OutlierDetection is passive health checking: endpoints that fail live
// requests are ejected for a while. It is on unless Disabled; zero fields
// mean the translator's defaults.
type OutlierDetection struct {
	Disabled bool
	// Consecutive5xx ejects after this many 5xx in a row; zero means
	// 5xx answers alone do not eject (only gateway failures do).
	Consecutive5xx uint32
	// ConsecutiveGatewayFailure ejects after this many 502/503/504 or
	// connection failures in a row.
	ConsecutiveGatewayFailure uint32
	Interval                  time.Duration
	BaseEjectionTime          time.Duration
	MaxEjectionPercent        uint32
}

// CircuitBreakers bounds what one gateway sends to one upstream. Zero
// fields mean the translator's defaults; MaxRetries zero means a retry
// budget instead of a fixed number.
type CircuitBreakers struct {
	MaxConnections     uint32
	MaxPendingRequests uint32
	MaxRequests        uint32
	MaxRetries         uint32
}

// checkUpstreamHealth returns the problems of an upstream's health
// settings; f is the upstream's field path ("upstreams[0]") and sticky
// says whether a sticky route targets it (ring hash has no slow start).
func checkUpstreamHealth(u Upstream, f string, sticky bool, bad func(field, format string, a ...any)) {
	if hc := u.HealthCheck; hc != nil {
		checkHealthCheck(hc, f+".healthCheck", bad)
	}
	od := u.OutlierDetection
	if od.Interval < 0 {
		bad(f+".outlierDetection.interval", "must be positive")
	}
	if od.BaseEjectionTime < 0 {
		bad(f+".outlierDetection.baseEjectionTime", "must be positive")
	}
	if od.MaxEjectionPercent > 100 {
		bad(f+".outlierDetection.maxEjectionPercent", "want 1..100, got %d", od.MaxEjectionPercent)
	}
	if u.SlowStart > 0 && sticky {
		bad(f+".slowStart", "a sticky route targets this upstream: ring hash has no slow start; remove slowStart or the stickiness")
	}
}

// checkHealthCheck adds the problems of an active health check at field
// hf: the settings of its protocol, a host name, and timers.
func checkHealthCheck(hc *HealthCheck, hf string, bad func(field, format string, a ...any)) {
	checkHealthProtocol(hc, hf, bad)
	if hc.GRPCService != "" && hc.Protocol != HealthGRPC {
		bad(hf, "a service name is for gRPC checks only")
	}
	if hc.Host != "" {
		if err := checkHost(hc.Host); err != nil || strings.Contains(hc.Host, "*") {
			bad(hf+"."+string(hc.Protocol)+".host", "%q is not a host name", hc.Host)
		}
	}
	if hc.Interval < 0 {
		bad(hf+".interval", "must be positive")
	}
	if hc.Timeout < 0 {
		bad(hf+".timeout", "must be positive")
	}
}

// checkHealthProtocol adds the problems of a health check's protocol and
// of what only HTTP checks read (path, expected statuses) or TCP checks
// lack (a host).
func checkHealthProtocol(hc *HealthCheck, hf string, bad func(field, format string, a ...any)) {
	switch hc.Protocol {
	case HealthHTTP:
		if !strings.HasPrefix(hc.Path, "/") {
			bad(hf+".http.path", "want a path starting with /, got %q", hc.Path)
		} else if strings.ContainsAny(hc.Path, " \t\r\n?#") {
			bad(hf+".http.path", "%q: a path has no spaces, query or fragment", hc.Path)
		}
		for i, r := range hc.ExpectedStatuses {
			if r.Min < 100 || r.Max > 599 || r.Min > r.Max {
				bad(fmt.Sprintf("%s.http.expectedStatuses[%d]", hf, i), "want a status or range within 100-599, low to high, got %s", r)
			}
		}
	case HealthTCP, HealthGRPC:
		if hc.Path != "" || len(hc.ExpectedStatuses) > 0 {
			bad(hf, "path and expected statuses are for HTTP checks only")
		}
		if hc.Protocol == HealthTCP && hc.Host != "" {
			bad(hf, "a TCP check sends no host")
		}
	default:
		bad(hf, "want one of http, tcp and grpc, got %q", hc.Protocol)
	}
}
