package controller

import "github.com/prometheus/client_golang/prometheus"

// metrics of the controller, registered on the registry handed to New.
type metrics struct {
	allocations prometheus.Counter
	releases    prometheus.Counter
	rejections  *prometheus.CounterVec
	configValid prometheus.Gauge
	syncs       *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		allocations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_ipam_allocations_total", Help: "VIPs newly given to Services by this replica.",
		}),
		releases: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_ipam_releases_total", Help: "VIPs released by this replica.",
		}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_ipam_rejections_total", Help: "Service requests refused, by Event reason.",
		}, []string{"reason"}),
		configValid: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlb_ipam_config_valid", Help: "1 when the VIPPools and L4Clusters last read were consistent; 0 when the last good set is still in use.",
		}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_ipam_service_syncs_total", Help: "Service syncs by result (ok, error).",
		}, []string{"result"}),
	}
	if reg != nil {
		reg.MustRegister(m.allocations, m.releases, m.rejections, m.configValid, m.syncs)
	}
	return m
}
