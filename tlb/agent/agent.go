package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

// DefaultRetryInterval is how long the agent waits before trying again
// after programming or announcing failed.
const DefaultRetryInterval = time.Second

// withdrawTimeout bounds the withdraw on shutdown (the parent context is
// already cancelled by then).
const withdrawTimeout = 5 * time.Second

// Options wire an Agent. Programmer, Ready, Clock and Log are required.
type Options struct {
	// Programmer applies the effective model to anyip and IPVS.
	Programmer Programmer
	// Announcer is the BGP speaker; nil announces nothing.
	Announcer Announcer
	// Health is the real-server checker; nil counts every real server as
	// healthy (no probes, no weight changes).
	Health RealServerHealth
	// Backends probes the L7 backends of services that ask the director
	// to (file mode); nil counts every such backend as ready.
	Backends L7BackendHealth
	// Ready receives readiness (the obs server's /readyz).
	Ready Readiness
	// GTM, when set, learns every VIP's health after each pass.
	GTM VIPBoard
	// AnnounceMode is health.AnnounceSubnets (default) or health.AnnounceVIPs.
	AnnounceMode string
	// DrainPeriod is the wait after withdrawing on shutdown.
	DrainPeriod time.Duration
	// KeepRoutesOnShutdown leaves the routes announced on shutdown, and
	// skips the drain: with BGP graceful restart the routers keep them
	// until this director is back (bgp.Config.GracefulRestart).
	KeepRoutesOnShutdown bool
	// FirstAnnounceWait, when positive (BGP graceful restart), lets the
	// first announcement wait up to this long after Run began until every
	// real server and L7 backend has had its first probe
	// (firstAnnounceHold); zero announces from the first pass.
	FirstAnnounceWait time.Duration
	// RetryInterval is the wait before retrying a failed step;
	// DefaultRetryInterval when zero.
	RetryInterval time.Duration
	// Connections counts the connections IPVS holds to draining real
	// servers (over their services only); nil removes a draining real server only at its timeout.
	Connections Connections
	// DrainTimeout is the longest a draining real server keeps its
	// flows; DefaultDrainTimeout when zero.
	DrainTimeout time.Duration
	// DrainPoll is how often a pass runs while a real server drains;
	// DefaultDrainPoll when zero.
	DrainPoll time.Duration
	// Clock gives timers.
	Clock Clock
	// Log receives readiness and announcement changes.
	Log *slog.Logger
	// Registerer, when set, gets the agent's metrics.
	Registerer prometheus.Registerer
}

// Agent is the director's run loop. Create it with New, feed health
// changes to HealthChanged and run it with Run.
type Agent struct {
	opts     Options
	healthCh chan struct{}
	ready    prometheus.Gauge
	vips     *vipMetrics

	// Owned by Run's goroutine.
	desired    model.Desired
	failed     bool
	wasReady   bool
	announced  []netip.Prefix
	everSynced bool
	// began is when Run started; announcedOnce whether an announcement
	// succeeded since; holding how much longer the first one waits.
	began         time.Time
	announcedOnce bool
	holding       time.Duration
	l7Down        map[netip.Addr]bool // VIPs whose L7 services had no ready backend at the last pass
	drains        drains
}

// New checks opts and returns an Agent.
func New(opts Options) (*Agent, error) {
	if opts.Programmer == nil || opts.Ready == nil || opts.Clock == nil || opts.Log == nil {
		return nil, errors.New("new agent: Programmer, Ready, Clock and Log are required")
	}
	if opts.AnnounceMode == "" {
		opts.AnnounceMode = health.AnnounceSubnets
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = DefaultRetryInterval
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	if opts.DrainPoll <= 0 {
		opts.DrainPoll = DefaultDrainPoll
	}
	a := &Agent{opts: opts, healthCh: make(chan struct{}, 1), ready: prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "tlb_director_ready",
		Help: "1 while the director is ready (IPVS programmed, at least one healthy real server) and announcing, else 0.",
	})}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(a.ready); err != nil {
			return nil, fmt.Errorf("register agent metrics: %w", err)
		}
	}
	var err error
	if a.vips, err = newVIPMetrics(opts.Registerer); err != nil {
		return nil, err
	}
	return a, nil
}

// HealthChanged queues a sync; it never blocks, so it can be the health
// checker's callback.
func (a *Agent) HealthChanged(health.Change) { a.queue() }

// BackendChanged queues a sync; it never blocks, so it can be the L7
// backend checker's callback.
func (a *Agent) BackendChanged(health.BackendChange) { a.queue() }

func (a *Agent) queue() {
	select {
	case a.healthCh <- struct{}{}:
	default: // a sync is already queued; it will read the newest state
	}
}

// Run syncs initial, then every model from updates (each new valid
// config, and the last one again on every resync) and every health
// change, until ctx ends. Then it shuts down: not ready, every route
// withdrawn, the drain period waited with IPVS in place. It returns the
// withdraw's error, if any.
func (a *Agent) Run(ctx context.Context, initial model.Desired, updates <-chan model.Desired) error {
	a.began = a.opts.Clock.Now()
	a.setDesired(initial)
	a.sync(ctx)
	for {
		var retry <-chan time.Time
		switch {
		case a.failed:
			retry = a.opts.Clock.After(a.opts.RetryInterval)
		case a.drains.pending():
			retry = a.opts.Clock.After(a.opts.DrainPoll)
		case a.holding > 0:
			retry = a.opts.Clock.After(a.holding)
		}
		select {
		case <-ctx.Done():
			return a.shutdown()
		case d := <-updates:
			a.setDesired(d)
			a.sync(ctx)
		case <-a.healthCh:
			a.sync(ctx)
		case <-retry:
			a.sync(ctx)
		}
	}
}

func (a *Agent) setDesired(d model.Desired) {
	a.desired = d
	if a.opts.Health != nil {
		a.opts.Health.SetRealServers(RealServers(d))
	}
	if a.opts.Backends != nil {
		a.opts.Backends.SetTargets(L7Targets(d))
	}
}

// backendState is an L7 backend's probe state; without a checker every
// one is Up.
func (a *Agent) backendState(t health.Target) health.State {
	if a.opts.Backends == nil {
		return health.Up
	}
	return a.opts.Backends.State(t)
}

// state is a real server's health; without a checker every one is Up.
func (a *Agent) state(rs netip.Addr) health.State {
	if a.opts.Health == nil {
		return health.Up
	}
	return a.opts.Health.State(rs)
}

type upFunc func(netip.Addr) bool

func (f upFunc) Up(rs netip.Addr) bool { return f(rs) }

// sync is one pass: program, decide readiness, announce.
func (a *Agent) sync(ctx context.Context) {
	log := a.opts.Log
	effective := a.drains.apply(ctx, Effective(a.desired, a.state), a.opts, a.opts.Clock.Now())
	res, perr := a.opts.Programmer.Program(ctx, effective)
	if perr != nil {
		log.Error("programming the data path failed; not ready", "err", perr)
	} else if res.Writes > 0 {
		log.Info("applied", "writes", res.Writes, "services", res.Services, "realServers", res.RealServers, "duration", res.Duration)
	}
	// A real server takes new flows when it passes its probes and has a
	// weight: one drained, excluded or not Ready is not a healthy gateway.
	serving := Serving(effective)
	hs := health.Evaluate(VIPs(effective), upFunc(func(rs netip.Addr) bool { return serving[rs] && a.state(rs) == health.Up }),
		L7Table(a.desired, a.backendState))
	a.reportVIPs(hs)
	ready, reason := health.Readiness(perr == nil, hs)
	if perr != nil {
		reason = "programming the data path failed: " + perr.Error()
	}
	prefixes := health.Announcement(ready, a.opts.AnnounceMode, a.desired.VIPRanges, hs)

	if ready != a.wasReady || !a.everSynced {
		log.Info("readiness", "ready", ready, "reason", reason)
	}
	a.opts.Ready.SetReady(ready, reason)
	if ready {
		a.ready.Set(1)
	} else {
		a.ready.Set(0)
	}

	var aerr error
	wasHolding := a.holding
	a.holding = a.firstAnnounceHold(effective)
	switch {
	case a.holding > 0:
		if wasHolding == 0 {
			log.Info("first announcement waits for the first probes (graceful restart: the routers keep the routes meanwhile)", "atMost", a.holding)
		}
	case a.opts.Announcer != nil:
		aerr = a.opts.Announcer.Announce(ctx, prefixes)
		if aerr != nil {
			log.Error("announcing failed; will retry", "prefixes", prefixes, "err", aerr)
		} else if !slices.Equal(prefixes, a.announced) || !a.announcedOnce {
			log.Info("announced set", "prefixes", prefixes)
			a.announced = prefixes
		}
		a.announcedOnce = a.announcedOnce || aerr == nil
	}
	a.wasReady, a.everSynced = ready, true
	a.failed = perr != nil || aerr != nil
}

// reportVIPs hands the VIPs' health to GTM and the metrics, and logs
// each VIP whose application lost its last ready backend, or got one
// back (gateway changes are logged per real server by the checker).
func (a *Agent) reportVIPs(hs []health.VIPHealth) {
	if a.opts.GTM != nil {
		a.opts.GTM.SetHealth(hs)
	}
	a.vips.set(hs)
	l7Down := map[netip.Addr]bool{}
	for _, h := range hs {
		if h.L7Services == 0 {
			continue
		}
		down := h.L7Ready == 0
		switch {
		case down && !a.l7Down[h.VIP]:
			a.opts.Log.Warn("VIP down: no L7 service has a ready backend", "vip", h.VIP, "l7Services", h.L7Services)
		case !down && a.l7Down[h.VIP]:
			a.opts.Log.Info("VIP has a ready L7 backend again", "vip", h.VIP, "l7Ready", h.L7Ready, "l7Services", h.L7Services)
		}
		if down {
			l7Down[h.VIP] = true
		}
	}
	a.l7Down = l7Down
}

// shutdown: not ready, withdraw everything, then drain with IPVS in place;
// with KeepRoutesOnShutdown only not ready (a graceful restart).
func (a *Agent) shutdown() error {
	if a.opts.KeepRoutesOnShutdown {
		a.opts.Ready.SetReady(false, "shutting down for a graceful restart: routes kept at the routers")
		a.ready.Set(0)
		a.opts.Log.Info("routes kept for a graceful restart; IPVS in place, no drain")
		return nil
	}
	a.opts.Ready.SetReady(false, "shutting down: routes withdrawn, draining")
	a.ready.Set(0)
	var err error
	if a.opts.Announcer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), withdrawTimeout)
		defer cancel()
		if err = a.opts.Announcer.WithdrawAll(ctx); err != nil {
			err = fmt.Errorf("withdraw routes on shutdown: %w", err)
			a.opts.Log.Error("withdrawing on shutdown failed; draining anyway", "err", err)
		}
	}
	a.opts.Log.Info("routes withdrawn; draining with IPVS in place", "drain", a.opts.DrainPeriod)
	if a.opts.DrainPeriod > 0 {
		<-a.opts.Clock.After(a.opts.DrainPeriod)
	}
	a.opts.Log.Info("drain over")
	return err
}
