package bgp

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Speaker's Prometheus metrics, registered on the
// Registerer passed to NewSpeaker.
type metrics struct {
	sessionUp     *prometheus.GaugeVec
	announced     prometheus.Gauge
	announceError *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		sessionUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlb_bgp_session_established",
			Help: "1 while the BGP session with the peer is Established, else 0.",
		}, []string{"peer"}),
		announced: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlb_bgp_announced_prefixes",
			Help: "Number of VIP prefixes this director currently announces.",
		}),
		announceError: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_bgp_announce_errors_total",
			Help: "Announce calls that failed, by reason (refused: prefix outside the allowed ranges; apply: GoBGP failed and the change was rolled back).",
		}, []string{"reason"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.sessionUp, m.announced, m.announceError} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register bgp metrics: %w", err)
		}
	}
	// Pre-create both reasons so dashboards see zeros.
	m.announceError.WithLabelValues("refused")
	m.announceError.WithLabelValues("apply")
	return m, nil
}
