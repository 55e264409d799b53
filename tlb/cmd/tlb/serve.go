package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/tlb/agent"
	"github.com/tlbproject/tlb/tlb/config"
	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

// serve wires the long-running director: health checker, GTM, BGP
// speaker, config watcher and the agent's run loop. It returns after ctx
// ends and the agent has withdrawn and drained; IPVS stays in place.
//
// With a source (Kubernetes), services come from it instead of the file:
// the agent starts only once the source has emitted its first model, so a
// restarting director never reconciles against an empty model, and while
// the API server is unreachable nothing changes.
func serve(ctx context.Context, path string, cfg *config.Config, source desiredSource, srv *obs.Server, prog agent.Programmer,
	drain drainWiring, bw bgpWiring, rejected prometheus.Counter, log *slog.Logger) error {
	opts := agent.Options{Programmer: prog, Ready: srv, DrainPeriod: cfg.Director.DrainPeriod,
		Clock: health.SystemClock{}, Log: log, Registerer: srv.Registry,
		Connections: drain.counter, DrainTimeout: drain.timeout}
	mux := srv.Handler()
	events := &healthEvents{}
	checks, err := newHealthChecks(cfg, srv, log, events)
	if err != nil {
		return err
	}
	if checks != nil {
		mux.Handle("/vip/", checks.gtm)
		opts.Health, opts.Backends, opts.GTM, opts.AnnounceMode = checks.realServers, checks.backends, checks.gtm, cfg.Health.Announce
	}
	var speaker *bgp.Speaker
	if cfg.BGP != nil {
		sp, stop, err := startSpeaker(ctx, *cfg.BGP, bw.nodeLabels, srv, log)
		if err != nil {
			return err
		}
		defer stop()
		opts.Announcer = sp
		opts.KeepRoutesOnShutdown = cfg.BGP.GracefulRestart
		if cfg.BGP.GracefulRestart {
			opts.FirstAnnounceWait = agent.FirstAnnounceWait(time.Duration(cfg.BGP.Defaulted().GracefulRestartSeconds) * time.Second)
		}
		speaker = sp
	}
	a, err := agent.New(opts)
	if err != nil {
		return err
	}
	events.agent = a
	stopServing, err := startServing(srv, mux, cfg, log)
	if err != nil {
		return err
	}
	defer stopServing()

	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	if speaker != nil && bw.policy != nil {
		go runBGPPolicy(runCtx, bw.policy, speaker, *cfg.BGP, log)
	}
	u := updates{ch: make(chan model.Desired), errs: make(chan error, 1), stopAll: stopAll, log: log}
	initial := cfg.Desired
	if source != nil {
		var ok bool
		if initial, ok = u.fromSource(runCtx, source, cfg.Director.ResyncInterval); !ok {
			// Stopped (or the source failed) before the first model:
			// nothing was programmed.
			return u.err()
		}
	} else {
		go u.fromFile(runCtx, path, cfg, rejected)
	}
	if checks != nil {
		checks.run(runCtx, initial)
	}
	runErr := a.Run(runCtx, initial, u.ch)
	stopAll()
	if err := u.err(); err != nil {
		return err
	}
	log.Info("stopping; IPVS state left in place")
	return runErr
}

// drainWiring is what the agent needs for gateway drains (Node
// annotation tlb.io/drain): the connections per real server, and
// the longest a drain lasts. The zero value counts nothing (a drain then
// ends at the timeout) with the agent's default timeout.
type drainWiring struct {
	counter agent.Connections
	timeout time.Duration
}

// healthEvents hands the health checkers' changes to the agent. The
// checkers are built first (the agent takes them in its Options), so the
// agent is set once it exists; the checkers report only once they run,
// after that.
type healthEvents struct{ agent *agent.Agent }

func (e *healthEvents) realServer(ch health.Change)     { e.agent.HealthChanged(ch) }
func (e *healthEvents) backend(ch health.BackendChange) { e.agent.BackendChanged(ch) }

// healthChecks are the director's probes (health:) and its GTM answer.
type healthChecks struct {
	realServers *health.Checker
	backends    *health.BackendChecker
	gtm         *health.GTM
}

// newHealthChecks builds the checks of cfg.Health; nil without one.
func newHealthChecks(cfg *config.Config, srv *obs.Server, log *slog.Logger, events *healthEvents) (*healthChecks, error) {
	if cfg.Health == nil {
		return nil, nil
	}
	checker, err := health.NewChecker(*cfg.Health, health.NewProber(*cfg.Health, nil), health.SystemClock{}, log,
		srv.Registry, events.realServer)
	if err != nil {
		return nil, fmt.Errorf("start health checker: %w", err)
	}
	// L7 backends a file's services list (l7Backends) are probed with
	// the same interval, timeout and rise/fall.
	backends, err := health.NewBackendChecker(*cfg.Health, health.NewBackendProbes(nil), health.SystemClock{}, log,
		srv.Registry, events.backend)
	if err != nil {
		return nil, fmt.Errorf("start L7 backend checker: %w", err)
	}
	return &healthChecks{realServers: checker, backends: backends, gtm: health.NewGTM()}, nil
}

// run starts probing the targets of the first model at once (real
// servers are known already) until ctx ends.
func (h *healthChecks) run(ctx context.Context, initial model.Desired) {
	h.realServers.SetRealServers(agent.RealServers(initial))
	go h.realServers.Run(ctx)
	h.backends.SetTargets(agent.L7Targets(initial))
	go h.backends.Run(ctx)
}

// startSpeaker starts the BGP speaker, its peers chosen by nodeLabels;
// stop, after the drain, closes the sessions (a Cease) and stops GoBGP,
// or with graceful restart leaves them to close with the process.
func startSpeaker(ctx context.Context, cfg bgp.Config, nodeLabels map[string]string, srv *obs.Server, log *slog.Logger) (*bgp.Speaker, func(), error) {
	sp, err := bgp.NewSpeaker(cfg, log, srv.Registry)
	if err != nil {
		return nil, nil, fmt.Errorf("create bgp speaker: %w", err)
	}
	if err := sp.SetNodeLabels(ctx, nodeLabels); err != nil {
		return nil, nil, err
	}
	if err := sp.Start(ctx); err != nil {
		return nil, nil, err
	}
	return sp, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sp.Stop(sctx); err != nil {
			log.Warn("stopping bgp speaker", "err", err)
		}
	}, nil
}

// startServing serves metrics, health and per-VIP health on mux; stop
// shuts the listener down.
func startServing(srv *obs.Server, mux *http.ServeMux, cfg *config.Config, log *slog.Logger) (func(), error) {
	addr, err := srv.Start(mux)
	if err != nil {
		return nil, err
	}
	log.Info("serving metrics, health and per-VIP health", "addr", addr, "bgp", cfg.BGP != nil, "healthChecks", cfg.Health != nil)
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("stopping metrics server", "err", err)
		}
	}, nil
}

// updates carries the desired models to the agent from the source or the
// config file; a source or watcher that stops shuts the director down
// (stopAll), its error on errs.
type updates struct {
	ch      chan model.Desired
	errs    chan error
	stopAll func()
	log     *slog.Logger
}

// fromSource runs the Kubernetes source, resending its latest model every
// resync, and returns its first model; false when ctx ended (or the
// source failed) before it.
func (u updates) fromSource(ctx context.Context, source desiredSource, resync time.Duration) (model.Desired, bool) {
	fromSource := make(chan model.Desired)
	go resyncLatest(ctx, fromSource, u.ch, resync)
	go func() {
		err := source.Run(ctx, func(d model.Desired) {
			select {
			case fromSource <- d:
			case <-ctx.Done():
			}
		})
		if err != nil {
			u.log.Error("kubernetes source stopped; shutting down", "err", err)
			u.stopAll()
		}
		u.errs <- err
	}()
	select {
	case d := <-u.ch:
		return d, true
	case <-ctx.Done():
		return model.Desired{}, false
	}
}

// fromFile watches the config file and sends each new valid version, and
// the last one again every resync interval, until ctx ends.
func (u updates) fromFile(ctx context.Context, path string, cfg *config.Config, rejected prometheus.Counter) {
	ticker := time.NewTicker(cfg.Director.ResyncInterval)
	defer ticker.Stop()
	w := &config.Watcher{Path: path, Log: u.log, OnReject: func(error) { rejected.Inc() }}
	err := w.Run(ctx, cfg, ticker.C, func(ctx context.Context, c *config.Config) {
		select {
		case u.ch <- c.Desired:
		case <-ctx.Done():
		}
	})
	if err != nil {
		u.log.Error("config watcher stopped; shutting down", "err", err)
		u.stopAll()
	}
	u.errs <- err
}

// err waits for the source or watcher to end and returns its error, nil
// when it ended because the director stopped.
func (u updates) err() error {
	if err := <-u.errs; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// resyncLatest forwards each model from the source to updates and, on
// every tick of interval, sends the latest one again, so that drift in
// the kernel is repaired in Kubernetes mode too (in file mode the config
// watcher does the same). It returns when ctx ends.
func resyncLatest(ctx context.Context, in <-chan model.Desired, out chan<- model.Desired, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var latest *model.Desired
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-in:
			latest = &d
		case <-ticker.C:
			if latest == nil {
				continue
			}
		}
		select {
		case out <- *latest:
		case <-ctx.Done():
			return
		}
	}
}
