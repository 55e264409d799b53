package gatewayctl

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics of the controller, registered on the registry handed to New.
type metrics struct {
	statusWrites *prometheus.CounterVec
	statusStale  *prometheus.CounterVec
	vipWrites    *prometheus.CounterVec
	syncs        *prometheus.CounterVec
	syncSeconds  prometheus.Histogram
	// statusTotal mirrors the sum of statusWrites for StatusWrites.
	statusTotal atomic.Int64
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		statusWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_gateway_status_writes_total", Help: "Status updates written, by kind (GatewayClass, Gateway, HTTPRoute, ...).",
		}, []string{"kind"}),
		statusStale: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_gateway_status_stale_total", Help: "Status updates refused because the cached object was stale (conflict or gone), by kind; the newer object brings another sync.",
		}, []string{"kind"}),
		vipWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_gateway_vip_service_writes_total", Help: "Writes to Gateways' VIP Services, by operation (create, update, delete).",
		}, []string{"op"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_gateway_syncs_total", Help: "Syncs of all Gateway API objects, by result (ok, error).",
		}, []string{"result"}),
	}
	m.syncSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "tlb_gateway_sync_seconds", Help: "Time of one sync of all Gateway API objects: build, plan and the writes.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
	})
	if reg != nil {
		reg.MustRegister(m.statusWrites, m.statusStale, m.vipWrites, m.syncs, m.syncSeconds)
	}
	return m
}

func (m *metrics) wroteStatus(kind string) {
	m.statusWrites.WithLabelValues(kind).Inc()
	m.statusTotal.Add(1)
}
