package xds

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	nacks     *prometheus.CounterVec
	refused   *prometheus.CounterVec
	publishes *prometheus.CounterVec
	version   *prometheus.GaugeVec
	problems  prometheus.Gauge
	rejected  *prometheus.CounterVec
	build     prometheus.Histogram
	push      prometheus.Histogram
	streams   prometheus.Gauge
	ackDelay  *prometheus.HistogramVec

	generation *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tlb_l7_xds_nacks_total",
			Help: "xDS responses rejected by clients, by group and type."}, []string{"group", "type"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tlb_l7_xds_refused_streams_total",
			Help: "xDS streams refused: another schema generation (schema), another group (group), a kind of client not served (kind), or a kind the client identity does not grant (identity)."}, []string{"reason"}),
		publishes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tlb_l7_snapshot_updates_total",
			Help: "Snapshots swapped, by kind/group key."}, []string{"key"}),
		version: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tlb_l7_snapshot_version_info",
			Help: "Current version per kind/group key and type (value 1)."}, []string{"key", "type", "version"}),
		problems: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tlb_l7_config_problems",
			Help: "Problems found in the last published config."}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tlb_l7_snapshot_rejected_total",
			Help: "Resource sets that failed validation and were not sent."}, []string{"key"}),
		build: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tlb_l7_build_duration_seconds",
			Help: "Time to resolve, translate and validate a config.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		push: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tlb_l7_push_duration_seconds",
			Help: "Time from Publish to all snapshots swapped.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tlb_l7_xds_streams",
			Help: "Open xDS streams."}),
		ackDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tlb_l7_xds_ack_delay_seconds",
			Help:    "Time from the start of the Publish that made the version a response carried (or the stream's opening, if later) to the client's ACK of that response, by group and type.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"group", "type"}),
		generation: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tlb_l7_generation_info",
			Help: "The schema generation served, derived from the build, and the group (value 1)."}, []string{"generation", "group"}),
	}
	if reg != nil {
		reg.MustRegister(m.nacks, m.refused, m.publishes, m.version, m.problems, m.rejected, m.build, m.push, m.streams, m.ackDelay, m.generation)
	}
	return m
}
