package translate

import (
	"cmp"
	"strings"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// Edge defaults of an upstream's health settings, used where the model
// leaves a field zero. docs/l7.md ("Backend health") says why each.
const (
	DefaultHealthInterval           = 5 * time.Second
	DefaultHealthTimeout            = 2 * time.Second
	DefaultUnhealthyThreshold       = 3
	DefaultHealthyThreshold         = 2
	healthJitterPercent             = 10
	DefaultConsecutiveGatewayErrors = 5
	DefaultOutlierInterval          = 10 * time.Second
	DefaultBaseEjectionTime         = 30 * time.Second
	DefaultMaxEjectionPercent       = 50
	DefaultMaxConnections           = 10000
	DefaultMaxPendingRequests       = 1024
	DefaultMaxRequests              = 10000
	DefaultRetryBudgetPercent       = 20.0
	DefaultMinRetryConcurrency      = 3
	DefaultSlowStart                = 10 * time.Second
)

// DefaultExpectedStatuses are the healthy HTTP statuses when none are
// given: 200-399, as a kubelet httpGet probe.
var DefaultExpectedStatuses = []model.StatusRange{{Min: 200, Max: 399}}

// applyHealth sets the cluster's active health check, outlier detection,
// circuit breakers and slow start from the upstream. sticky clusters use
// ring hash, which has no slow start.
func applyHealth(c *cluster.Cluster, s model.Service, u model.Upstream, sticky bool) {
	if u.HealthCheck != nil {
		c.HealthChecks = []*core.HealthCheck{healthCheck(s, u)}
		// Endpoints removed from EDS (a Pod deleted) leave at once instead
		// of lingering until they fail the check.
		c.IgnoreHealthOnHostRemoval = true
		// New endpoints do not count towards the panic threshold until
		// checked, so a rollout that doubles the set cannot trip panic.
		c.CommonLbConfig = &cluster.Cluster_CommonLbConfig{IgnoreNewHostsUntilFirstHc: true}
	}
	if od := outlierDetection(u.OutlierDetection); od != nil {
		c.OutlierDetection = od
	}
	c.CircuitBreakers = circuitBreakers(u.CircuitBreakers)
	window := u.SlowStart
	if window == 0 {
		window = DefaultSlowStart
	}
	if window > 0 && !sticky {
		c.LbConfig = &cluster.Cluster_RoundRobinLbConfig_{RoundRobinLbConfig: &cluster.Cluster_RoundRobinLbConfig{
			SlowStartConfig: &cluster.Cluster_SlowStartConfig{SlowStartWindow: dur(window)},
		}}
	}
}

func healthCheck(s model.Service, u model.Upstream) *core.HealthCheck {
	hc := u.HealthCheck
	interval := cmp.Or(hc.Interval, DefaultHealthInterval)
	out := &core.HealthCheck{
		Timeout:  dur(cmp.Or(hc.Timeout, DefaultHealthTimeout)),
		Interval: dur(interval),
		// Envoy checks a cluster that has had no traffic yet every 60s
		// (no_traffic_interval), and only learns of the first request
		// when that check comes: a backend failing in a new (or changed,
		// hence new) cluster's first minute of traffic kept getting
		// requests for up to a minute, not interval x threshold. The
		// configured interval holds from the start.
		NoTrafficInterval:     dur(interval),
		IntervalJitterPercent: healthJitterPercent,
		UnhealthyThreshold:    u32(cmp.Or(hc.UnhealthyThreshold, DefaultUnhealthyThreshold)),
		HealthyThreshold:      u32(cmp.Or(hc.HealthyThreshold, DefaultHealthyThreshold)),
	}
	host := hc.Host
	if host == "" {
		host = healthHost(s)
	}
	switch hc.Protocol {
	case model.HealthHTTP:
		statuses := hc.ExpectedStatuses
		if len(statuses) == 0 {
			statuses = DefaultExpectedStatuses
		}
		h := &core.HealthCheck_HttpHealthCheck{Host: host, Path: hc.Path}
		for _, r := range statuses {
			// Envoy's ranges are half-open: [start, end).
			h.ExpectedStatuses = append(h.ExpectedStatuses, &typev3.Int64Range{Start: int64(r.Min), End: int64(r.Max) + 1})
		}
		if u.HTTP2 {
			h.CodecClientType = typev3.CodecClientType_HTTP2
		}
		out.HealthChecker = &core.HealthCheck_HttpHealthCheck_{HttpHealthCheck: h}
	case model.HealthGRPC:
		out.HealthChecker = &core.HealthCheck_GrpcHealthCheck_{GrpcHealthCheck: &core.HealthCheck_GrpcHealthCheck{
			ServiceName: hc.GRPCService, Authority: host,
		}}
	default: // TCP: connect only
		out.HealthChecker = &core.HealthCheck_TcpHealthCheck_{TcpHealthCheck: &core.HealthCheck_TcpHealthCheck{}}
	}
	return out
}

// healthHost is the Host of a check when none is set: the service's first
// host without a wildcard, else its name. Envoy's own default, the cluster
// name, holds a "/" that many servers refuse in a Host header.
func healthHost(s model.Service) string {
	for _, h := range s.Hosts {
		if !strings.Contains(h, "*") {
			return h
		}
	}
	return s.Name
}

func outlierDetection(m model.OutlierDetection) *cluster.OutlierDetection {
	if m.Disabled {
		return nil
	}
	od := &cluster.OutlierDetection{
		ConsecutiveGatewayFailure:          u32(cmp.Or(m.ConsecutiveGatewayFailure, DefaultConsecutiveGatewayErrors)),
		EnforcingConsecutiveGatewayFailure: u32(100),
		// Counted but not enforced unless asked: a 500 often says more
		// about the request than about the endpoint.
		EnforcingConsecutive_5Xx: u32(0),
		Interval:                 dur(cmp.Or(m.Interval, DefaultOutlierInterval)),
		BaseEjectionTime:         dur(cmp.Or(m.BaseEjectionTime, DefaultBaseEjectionTime)),
		MaxEjectionPercent:       u32(cmp.Or(m.MaxEjectionPercent, DefaultMaxEjectionPercent)),
	}
	if m.Consecutive5xx > 0 {
		od.Consecutive_5Xx = u32(m.Consecutive5xx)
		od.EnforcingConsecutive_5Xx = u32(100)
	}
	return od
}

func circuitBreakers(m model.CircuitBreakers) *cluster.CircuitBreakers {
	t := &cluster.CircuitBreakers_Thresholds{
		Priority:           core.RoutingPriority_DEFAULT,
		MaxConnections:     u32(cmp.Or(m.MaxConnections, DefaultMaxConnections)),
		MaxPendingRequests: u32(cmp.Or(m.MaxPendingRequests, DefaultMaxPendingRequests)),
		MaxRequests:        u32(cmp.Or(m.MaxRequests, DefaultMaxRequests)),
		TrackRemaining:     true,
	}
	if m.MaxRetries > 0 {
		t.MaxRetries = u32(m.MaxRetries)
	} else {
		t.RetryBudget = &cluster.CircuitBreakers_Thresholds_RetryBudget{
			BudgetPercent:       &typev3.Percent{Value: DefaultRetryBudgetPercent},
			MinRetryConcurrency: u32(DefaultMinRetryConcurrency),
		}
	}
	return &cluster.CircuitBreakers{Thresholds: []*cluster.CircuitBreakers_Thresholds{t}}
}
