package health

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Change reports that a real server went up or down.
type Change struct {
	// RealServer is the gateway node's address.
	RealServer netip.Addr
	// State is its new state (Up or Down).
	State State
	// Err is the last probe error when it went down.
	Err error
	// At is when the deciding probe finished.
	At time.Time
}

// Checker probes every real server each interval and tracks rise/fall.
// Changes are delivered to OnChange, from the checker's goroutine, in
// address order, after each round.
type Checker struct {
	cfg     Config
	clock   Clock
	log     *slog.Logger
	notify  func(Change)
	metrics *checkerMetrics
	rounds  *rounds[netip.Addr]
}

// NewChecker returns a Checker for a defaulted, valid cfg. onChange may be
// nil; reg may be nil (no metrics).
func NewChecker(cfg Config, prober Prober, clock Clock, log *slog.Logger, reg prometheus.Registerer, onChange func(Change)) (*Checker, error) {
	cfg = cfg.Defaulted()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newCheckerMetrics(reg)
	if err != nil {
		return nil, err
	}
	if onChange == nil {
		onChange = func(Change) {}
	}
	return &Checker{cfg: cfg, clock: clock, log: log, notify: onChange, metrics: m, rounds: &rounds[netip.Addr]{
		compare: netip.Addr.Compare, probe: prober.Probe, timeout: cfg.Timeout, rise: cfg.Rise, fall: cfg.Fall,
	}}, nil
}

// SetRealServers replaces the set of real servers to probe. New ones start
// Unknown; removed ones are forgotten.
func (c *Checker) SetRealServers(rss []netip.Addr) {
	for _, rs := range c.rounds.set(rss) {
		c.metrics.up.DeleteLabelValues(rs.String())
	}
}

// State returns the state of one real server (Unknown if not tracked).
func (c *Checker) State(rs netip.Addr) State { return c.rounds.state(rs) }

// Up reports whether rs is Up.
func (c *Checker) Up(rs netip.Addr) bool { return c.State(rs) == Up }

// Run probes every interval until ctx ends.
func (c *Checker) Run(ctx context.Context) { every(ctx, c.clock, c.cfg.Interval, c.CheckOnce) }

// CheckOnce probes every real server once, concurrently, each with the
// configured timeout, then applies the results and reports changes.
func (c *Checker) CheckOnce(ctx context.Context) {
	outs := c.rounds.round(ctx)
	now := c.clock.Now()
	var changes []Change
	for _, o := range outs {
		c.metrics.checks.WithLabelValues(result(o.err == nil)).Inc()
		up := 0.0
		if o.state == Up {
			up = 1
		}
		c.metrics.up.WithLabelValues(o.target.String()).Set(up)
		if o.changed {
			changes = append(changes, Change{RealServer: o.target, State: o.state, Err: o.err, At: now})
		}
	}
	for _, ch := range changes {
		if ch.State == Down {
			c.log.Warn("real server down", "realServer", ch.RealServer, "err", ch.Err)
		} else {
			c.log.Info("real server up", "realServer", ch.RealServer)
		}
		c.metrics.transitions.WithLabelValues(ch.State.String()).Inc()
		c.notify(ch)
	}
}

func result(ok bool) string {
	if ok {
		return "success"
	}
	return "failure"
}

type checkerMetrics struct {
	up          *prometheus.GaugeVec
	checks      *prometheus.CounterVec
	transitions *prometheus.CounterVec
}

func newCheckerMetrics(reg prometheus.Registerer) (*checkerMetrics, error) {
	m := &checkerMetrics{
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlb_health_real_server_up",
			Help: "1 while the real server passes its health checks (after rise/fall), else 0.",
		}, []string{"real_server"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_health_checks_total",
			Help: "Health probes sent, by result.",
		}, []string{"result"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_health_transitions_total",
			Help: "Real servers changing state, by new state.",
		}, []string{"state"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.up, m.checks, m.transitions} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
