package authz

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// The decisions of one interceptor.
const (
	decisionAllow = "allow"
	decisionDeny  = "deny"
	decisionError = "error"
)

type metrics struct {
	decisions *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	checks    *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tlb_l7_authz_decisions_total",
			Help: "Interceptor decisions, by interceptor (type, or external:<id>) and decision (allow, deny, error)."},
			[]string{"interceptor", "decision"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tlb_l7_authz_interceptor_duration_seconds",
			Help:    "Time one interceptor took, by interceptor.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}, []string{"interceptor"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tlb_l7_authz_checks_total",
			Help: "ext_authz checks answered, by result (allow, deny, error, bad_config)."}, []string{"result"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.decisions, m.latency, m.checks} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("authz: registering metrics: %w", err)
		}
	}
	return m, nil
}

// stepMetrics are one interceptor's series, resolved once when its chain
// is compiled so a check does no label lookups.
type stepMetrics struct {
	allow, deny, err prometheus.Counter
	latency          prometheus.Observer
}

func (m *metrics) step(name string) stepMetrics {
	return stepMetrics{
		allow:   m.decisions.WithLabelValues(name, decisionAllow),
		deny:    m.decisions.WithLabelValues(name, decisionDeny),
		err:     m.decisions.WithLabelValues(name, decisionError),
		latency: m.latency.WithLabelValues(name),
	}
}
