package director

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the director's Prometheus metrics.
type Metrics struct {
	syncDuration  prometheus.Histogram
	syncErrors    prometheus.Counter
	vips          prometheus.Gauge
	services      prometheus.Gauge
	realServers   prometheus.Gauge
	netlinkWrites prometheus.Counter
	foreign       prometheus.Gauge
	listed        prometheus.Counter
	cached        prometheus.Counter
	fullListings  prometheus.Counter
	staleMemory   prometheus.Counter
	recordCorrupt prometheus.Counter
}

// NewMetrics creates the director's metrics and registers them on reg
// (the binary's obs registry, never the global one).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		syncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tlb_director_sync_duration_seconds",
			Help:    "Time taken by one IPVS reconcile (list, plan, apply).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18),
		}),
		syncErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_director_sync_errors_total",
			Help: "IPVS reconciles that failed or were rejected (invalid desired state).",
		}),
		vips: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlb_director_vips_programmed",
			Help: "Distinct VIP addresses in the director's IPVS services.",
		}),
		services: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlb_director_services_programmed",
			Help: "IPVS virtual services (VIP, protocol, port) the director programs.",
		}),
		realServers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlb_director_real_servers_programmed",
			Help: "IPVS real servers (destinations) over all the director's services.",
		}),
		netlinkWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_director_netlink_writes_total",
			Help: "IPVS netlink writes (service or real-server add, update, delete).",
		}),
		foreign: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlb_director_foreign_services",
			Help: "IPVS services present that the director does not own and never touches.",
		}),
		listed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_director_services_listed_total",
			Help: "Services whose real servers a reconcile listed from the kernel (one netlink dump each).",
		}),
		cached: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_director_services_cached_total",
			Help: "Services a reconcile planned from what the director remembers programming, listing nothing.",
		}),
		fullListings: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_director_full_listings_total",
			Help: "Reconciles that listed every service and its real servers from the kernel (first, after an error, periodic).",
		}),
		staleMemory: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_director_stale_memory_total",
			Help: "Reconciles planned from what the director remembers programming whose writes the kernel refused (IPVS changed behind its back); each then listed everything and repaired it.",
		}),
		recordCorrupt: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlb_director_record_corrupt_total",
			Help: "Unreadable ownership records (empty, truncated, corrupt) moved aside at start; the director then started with an empty record.",
		}),
	}
	for _, c := range []prometheus.Collector{m.syncDuration, m.syncErrors, m.vips, m.services, m.realServers, m.netlinkWrites, m.foreign,
		m.listed, m.cached, m.fullListings, m.staleMemory, m.recordCorrupt} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) observe(r Result, err error) {
	if m == nil {
		return
	}
	m.syncDuration.Observe(r.Duration.Seconds())
	m.netlinkWrites.Add(float64(r.Writes))
	if err != nil {
		m.syncErrors.Inc()
	}
	if r.StaleMemory {
		m.staleMemory.Inc()
	}
	if !r.planned {
		return // the kernel was not listed: gauges keep the last figures
	}
	m.vips.Set(float64(r.VIPs))
	m.services.Set(float64(r.Services))
	m.realServers.Set(float64(r.RealServers))
	m.foreign.Set(float64(r.Plan.Foreign))
	m.listed.Add(float64(r.Plan.Listed))
	m.cached.Add(float64(r.Plan.Cached))
	if r.FullListing {
		m.fullListings.Inc()
	}
}

func (m *Metrics) countCorruptRecord() {
	if m != nil {
		m.recordCorrupt.Inc()
	}
}
