package agent

import (
	"fmt"
	"net/netip"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/tlb/health"
)

// vipMetrics are the per-VIP gauges; their only label, vip, comes from
// the model, and a VIP that leaves the model leaves the gauges.
type vipMetrics struct {
	up      *prometheus.GaugeVec
	l7      *prometheus.GaugeVec
	l7Ready *prometheus.GaugeVec
	shown   map[netip.Addr]bool
}

func newVIPMetrics(reg prometheus.Registerer) (*vipMetrics, error) {
	m := &vipMetrics{
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlb_director_vip_up",
			Help: "1 while the VIP can serve (a healthy gateway and, if it has L7 services, one with a ready backend), as GTM reports it; else 0.",
		}, []string{"vip"}),
		l7: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlb_director_vip_l7_services",
			Help: "L7 services (applications) behind the VIP.",
		}, []string{"vip"}),
		l7Ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlb_director_vip_l7_services_ready",
			Help: "L7 services behind the VIP with at least one ready backend.",
		}, []string{"vip"}),
		shown: map[netip.Addr]bool{},
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.up, m.l7, m.l7Ready} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register agent metrics: %w", err)
			}
		}
	}
	return m, nil
}

// set shows hs and drops the VIPs no longer in it.
func (m *vipMetrics) set(hs []health.VIPHealth) {
	now := make(map[netip.Addr]bool, len(hs))
	for _, h := range hs {
		vip := h.VIP.String()
		up := 0.0
		if h.Up() {
			up = 1
		}
		m.up.WithLabelValues(vip).Set(up)
		m.l7.WithLabelValues(vip).Set(float64(h.L7Services))
		m.l7Ready.WithLabelValues(vip).Set(float64(h.L7Ready))
		now[h.VIP] = true
	}
	for vip := range m.shown {
		if !now[vip] {
			for _, g := range []*prometheus.GaugeVec{m.up, m.l7, m.l7Ready} {
				g.DeleteLabelValues(vip.String())
			}
		}
	}
	m.shown = now
}
