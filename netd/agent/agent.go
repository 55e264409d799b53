// Package agent runs netd's control loop: it loads the configuration file,
// keeps the last valid one, reconciles the gateway on every change and on a
// resync timer, and records metrics. It owns no kernel state itself; all
// kernel changes go through the Reconciler it is given.
package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/netd"
	"github.com/tlbproject/tlb/netd/config"
	"github.com/tlbproject/tlb/netd/model"
)

// Reconciler brings the kernel to a desired gateway state.
type Reconciler interface {
	Reconcile(desired model.Gateway) (netd.Result, error)
}

// Agent is one netd instance's control loop.
type Agent struct {
	path    string // where the configuration comes from, for messages
	load    func() (config.Config, error)
	rec     Reconciler
	log     *slog.Logger
	now     func() time.Time
	metrics *Metrics

	current *config.Config // last valid configuration, nil before the first
}

// New returns an Agent reading the file at path. now is the clock used to
// time reconciles.
func New(path string, rec Reconciler, m *Metrics, log *slog.Logger, now func() time.Time) *Agent {
	return NewWithLoader(path, func() (config.Config, error) { return config.Load(path) }, rec, m, log, now)
}

// NewWithLoader returns an Agent whose configuration comes from load
// (Kubernetes, say) rather than a file; origin names it in messages.
func NewWithLoader(origin string, load func() (config.Config, error), rec Reconciler, m *Metrics, log *slog.Logger, now func() time.Time) *Agent {
	return &Agent{path: origin, load: load, rec: rec, log: log, now: now, metrics: m}
}

// Config returns the last valid configuration (false before the first).
func (a *Agent) Config() (config.Config, bool) {
	if a.current == nil {
		return config.Config{}, false
	}
	return *a.current, true
}

// Load reads the file. An invalid file is rejected with an error naming
// the field, and the last valid configuration stays in force.
func (a *Agent) Load() error {
	cfg, err := a.load()
	if err != nil {
		a.metrics.ConfigErrors.Inc()
		return err
	}
	if a.current != nil && cfg.Gateway.Tunnel != a.current.Gateway.Tunnel {
		a.metrics.ConfigErrors.Inc()
		return fmt.Errorf("netd config %s: netd.tunnel: changing the tunnel from %s to %s needs a restart",
			a.path, a.current.Gateway.Tunnel, cfg.Gateway.Tunnel)
	}
	if a.current != nil && cfg.MetricsAddress != a.current.MetricsAddress {
		a.log.Warn("netd.metricsAddress changed; it takes effect on restart", "old", a.current.MetricsAddress, "new", cfg.MetricsAddress)
	}
	a.current = &cfg
	return nil
}

// Reconcile applies the last valid configuration to the kernel.
func (a *Agent) Reconcile() (netd.Result, error) {
	if a.current == nil {
		return netd.Result{}, fmt.Errorf("no valid netd config loaded from %s", a.path)
	}
	start := a.now()
	res, err := a.rec.Reconcile(a.current.Gateway)
	a.metrics.vips.observe(a.current.Gateway, res, err)
	a.metrics.ReconcileDuration.Observe(a.now().Sub(start).Seconds())
	a.metrics.KernelWrites.Add(float64(res.Writes))
	if err != nil {
		a.metrics.ReconcileErrors.Inc()
		return res, fmt.Errorf("reconcile gateway (tunnel %s): %w", a.current.Gateway.Tunnel, err)
	}
	a.metrics.VIPsBound.Set(float64(len(a.current.Gateway.VIPs)))
	return res, nil
}

// Run reloads and reconciles on every value from changed, and reconciles
// every resync interval to repair drift, until ctx ends. ready is called
// with the outcome of each reconcile.
func (a *Agent) Run(ctx context.Context, changed <-chan struct{}, resync time.Duration, ready func(ok bool, reason string)) {
	t := time.NewTicker(resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			if err := a.Load(); err != nil {
				a.log.Error("rejected netd config; keeping the last valid one", "path", a.path, "err", err)
				continue
			}
			a.log.Info("netd config changed", "path", a.path)
		case <-t.C:
		}
		res, err := a.Reconcile()
		if err != nil {
			a.log.Error("reconcile failed; will retry", "err", err)
			ready(false, err.Error())
			continue
		}
		if res.Writes > 0 {
			a.log.Info("gateway reconciled", "writes", res.Writes, "plan", res.Plan.String())
		}
		ready(true, "")
	}
}

// Metrics are netd's Prometheus metrics.
type Metrics struct {
	VIPsBound         prometheus.Gauge
	ReconcileErrors   prometheus.Counter
	ReconcileDuration prometheus.Histogram
	KernelWrites      prometheus.Counter
	ConfigErrors      prometheus.Counter

	vips *vipBound // netd_vip_bound{vip}
}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		VIPsBound: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "netd_vips_bound", Help: "VIPs bound on the tunnel after the last successful reconcile.",
		}),
		ReconcileErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netd_reconcile_errors_total", Help: "Reconciles that failed.",
		}),
		ReconcileDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "netd_reconcile_duration_seconds", Help: "Time to observe, plan and apply the gateway state.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		KernelWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netd_kernel_writes_total", Help: "Kernel writes made by reconciles (0 per reconcile when in sync).",
		}),
		ConfigErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netd_config_errors_total", Help: "Configuration files rejected as invalid.",
		}),
		vips: newVIPBound(),
	}
	reg.MustRegister(m.VIPsBound, m.ReconcileErrors, m.ReconcileDuration, m.KernelWrites, m.ConfigErrors, m.vips.gauge)
	return m
}
