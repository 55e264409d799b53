package health

import (
	"cmp"
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Target is one L7 backend (an application's address behind the
// gateways) that the director probes, and how.
type Target struct {
	// Addr is the backend's ip:port.
	Addr netip.AddrPort
	// Path, when set, makes the probe an HTTP GET of this path; empty: a
	// TCP connect.
	Path string
	// Status is the HTTP status expected with Path; 0 accepts any 2xx.
	Status int
}

// String renders "198.51.100.20:8080" or "http://198.51.100.20:8080/healthz".
func (t Target) String() string {
	if t.Path == "" {
		return t.Addr.String()
	}
	return "http://" + t.Addr.String() + t.Path
}

// CompareTarget orders targets by address, then path, then status.
func CompareTarget(a, b Target) int {
	if c := a.Addr.Compare(b.Addr); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Compare(a.Status, b.Status)
}

// BackendProber checks one L7 backend once. Implementations must respect ctx.
type BackendProber interface {
	ProbeBackend(ctx context.Context, t Target) error
}

// BackendChange reports that an L7 backend went up or down.
type BackendChange struct {
	Target Target
	State  State
	Err    error
	At     time.Time
}

// BackendChecker probes L7 backends with the same interval, timeout and
// rise/fall as the real servers' checks (the `health:` section), so the
// director can tell GTM when an application behind a VIP has no backend
// left. Changes go to onChange from the checker's goroutine.
type BackendChecker struct {
	cfg     Config
	clock   Clock
	log     *slog.Logger
	notify  func(BackendChange)
	rounds  *rounds[Target]
	checks  *prometheus.CounterVec
	changes *prometheus.CounterVec
}

// NewBackendChecker returns a BackendChecker for a valid cfg (its kind,
// port and path are the real servers' and are not used here). onChange
// and reg may be nil.
func NewBackendChecker(cfg Config, prober BackendProber, clock Clock, log *slog.Logger, reg prometheus.Registerer, onChange func(BackendChange)) (*BackendChecker, error) {
	cfg = cfg.Defaulted()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if onChange == nil {
		onChange = func(BackendChange) {}
	}
	c := &BackendChecker{cfg: cfg, clock: clock, log: log, notify: onChange,
		rounds: &rounds[Target]{compare: CompareTarget, probe: prober.ProbeBackend, timeout: cfg.Timeout, rise: cfg.Rise, fall: cfg.Fall},
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_health_l7_backend_checks_total",
			Help: "Probes of L7 backends (file mode: services[].l7Backends), by result.",
		}, []string{"result"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_health_l7_backend_transitions_total",
			Help: "L7 backends changing state, by new state.",
		}, []string{"state"}),
	}
	if reg != nil {
		for _, m := range []prometheus.Collector{c.checks, c.changes} {
			if err := reg.Register(m); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// SetTargets replaces the backends probed; new ones start Unknown.
func (c *BackendChecker) SetTargets(ts []Target) { c.rounds.set(ts) }

// State returns one backend's state (Unknown if not probed yet or not tracked).
func (c *BackendChecker) State(t Target) State { return c.rounds.state(t) }

// Run probes every interval until ctx ends.
func (c *BackendChecker) Run(ctx context.Context) { every(ctx, c.clock, c.cfg.Interval, c.CheckOnce) }

// CheckOnce probes every backend once and reports changes.
func (c *BackendChecker) CheckOnce(ctx context.Context) {
	outs := c.rounds.round(ctx)
	now := c.clock.Now()
	var changes []BackendChange
	for _, o := range outs {
		c.checks.WithLabelValues(result(o.err == nil)).Inc()
		if o.changed {
			changes = append(changes, BackendChange{Target: o.target, State: o.state, Err: o.err, At: now})
		}
	}
	for _, ch := range changes {
		if ch.State == Down {
			c.log.Warn("L7 backend down", "backend", ch.Target.String(), "err", ch.Err)
		} else {
			c.log.Info("L7 backend up", "backend", ch.Target.String())
		}
		c.changes.WithLabelValues(ch.State.String()).Inc()
		c.notify(ch)
	}
}
