package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	rejected prometheus.Counter, log *slog.Logger) error {
	var a *agent.Agent
	opts := agent.Options{Programmer: prog, Ready: srv, DrainPeriod: cfg.Director.DrainPeriod,
		Clock: health.SystemClock{}, Log: log, Registerer: srv.Registry}
	mux := srv.Handler()
	var checker *health.Checker
	var backends *health.BackendChecker
	if cfg.Health != nil {
		var err error
		checker, err = health.NewChecker(*cfg.Health, health.NewProber(*cfg.Health, nil), health.SystemClock{}, log,
			srv.Registry, func(ch health.Change) { a.HealthChanged(ch) })
		if err != nil {
			return fmt.Errorf("start health checker: %w", err)
		}
		// L7 backends a file's services list (l7Backends) are probed with
		// the same interval, timeout and rise/fall.
		backends, err = health.NewBackendChecker(*cfg.Health, health.NewBackendProbes(nil), health.SystemClock{}, log,
			srv.Registry, func(ch health.BackendChange) { a.BackendChanged(ch) })
		if err != nil {
			return fmt.Errorf("start L7 backend checker: %w", err)
		}
		gtm := health.NewGTM()
		mux.Handle("/vip/", gtm)
		opts.Health, opts.Backends, opts.GTM, opts.AnnounceMode = checker, backends, gtm, cfg.Health.Announce
	}
	if cfg.BGP != nil {
		sp, err := bgp.NewSpeaker(*cfg.BGP, log, srv.Registry)
		if err != nil {
			return fmt.Errorf("create bgp speaker: %w", err)
		}
		if err := sp.Start(ctx); err != nil {
			return err
		}
		defer func() {
			// After the drain: close the sessions (a Cease) and stop GoBGP.
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := sp.Stop(sctx); err != nil {
				log.Warn("stopping bgp speaker", "err", err)
			}
		}()
		opts.Announcer = sp
	}
	var err error
	if a, err = agent.New(opts); err != nil {
		return err
	}

	addr, err := srv.Start(mux)
	if err != nil {
		return err
	}
	log.Info("serving metrics, health and per-VIP health", "addr", addr, "bgp", cfg.BGP != nil, "healthChecks", cfg.Health != nil)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("stopping metrics server", "err", err)
		}
	}()

	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	updates := make(chan model.Desired)
	watchErr := make(chan error, 1)
	initial := cfg.Desired
	if source != nil {
		fromSource := make(chan model.Desired)
		go resyncLatest(runCtx, fromSource, updates, cfg.Director.ResyncInterval)
		go func() {
			err := source.Run(runCtx, func(d model.Desired) {
				select {
				case fromSource <- d:
				case <-runCtx.Done():
				}
			})
			if err != nil {
				log.Error("kubernetes source stopped; shutting down", "err", err)
				stopAll()
			}
			watchErr <- err
		}()
		select {
		case initial = <-updates:
		case <-runCtx.Done():
			// Stopped (or the source failed) before the first model:
			// nothing was programmed.
			if err := <-watchErr; err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		}
	} else {
		go func() {
			ticker := time.NewTicker(cfg.Director.ResyncInterval)
			defer ticker.Stop()
			w := &config.Watcher{Path: path, Log: log, OnReject: func(error) { rejected.Inc() }}
			err := w.Run(runCtx, cfg, ticker.C, func(ctx context.Context, c *config.Config) {
				select {
				case updates <- c.Desired:
				case <-ctx.Done():
				}
			})
			if err != nil {
				log.Error("config watcher stopped; shutting down", "err", err)
				stopAll()
			}
			watchErr <- err
		}()
	}
	if checker != nil {
		// Probe from the first round: real servers are known already.
		checker.SetRealServers(agent.RealServers(initial))
		go checker.Run(runCtx)
		backends.SetTargets(agent.L7Targets(initial))
		go backends.Run(runCtx)
	}
	runErr := a.Run(runCtx, initial, updates)
	stopAll()
	if err := <-watchErr; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("stopping; IPVS state left in place")
	return runErr
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
