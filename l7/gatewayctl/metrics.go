package gatewayctl

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics of the controller, registered on the registry handed to New.
type metrics struct {
	statusWrites *prometheus.CounterVec
	vipWrites    *prometheus.CounterVec
	syncs        *prometheus.CounterVec
	// statusTotal mirrors the sum of statusWrites for StatusWrites.
	statusTotal atomic.Int64
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		statusWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_gateway_status_writes_total", Help: "Status updates written, by kind (GatewayClass, Gateway, HTTPRoute, ...).",
		}, []string{"kind"}),
		vipWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_gateway_vip_service_writes_total", Help: "Writes to Gateways' VIP Services, by operation (create, update, delete).",
		}, []string{"op"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_gateway_syncs_total", Help: "Syncs of all Gateway API objects, by result (ok, error).",
		}, []string{"result"}),
	}
	if reg != nil {
		reg.MustRegister(m.statusWrites, m.vipWrites, m.syncs)
	}
	return m
}

func (m *metrics) wroteStatus(kind string) {
	m.statusWrites.WithLabelValues(kind).Inc()
	m.statusTotal.Add(1)
}
