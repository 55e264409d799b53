package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/l7/authz"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/dslsource"
	"github.com/tlbproject/tlb/l7/kube"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/ratelimit/configserver"
	"github.com/tlbproject/tlb/l7/routetable"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// adsListener is where ADS is served, with the mutual TLS of a TCP
// address (nil on a unix socket).
type adsListener struct {
	network, address string
	creds            credentials.TransportCredentials
}

// newADSListener checks the ADS address and its credentials.
func newADSListener(addr, cert, key, ca string) (adsListener, error) {
	network, address, err := xdsListenAddr(addr)
	if err != nil {
		return adsListener{}, err
	}
	creds, err := xdsCredentials(network, address, cert, key, ca)
	return adsListener{network: network, address: address, creds: creds}, err
}

// serveADS serves gs on the ADS address unless off (--keyless), and says
// so with attrs; Serve's result goes to errc.
func serveADS(log *slog.Logger, gs *grpc.Server, ads adsListener, on bool, errc chan<- error, attrs ...any) error {
	if !on {
		log.Info("keyless: no key is read and no ADS is served", attrs...)
		return nil
	}
	lis, err := listenADS(ads.network, ads.address)
	if err != nil {
		return err
	}
	go func() { errc <- gs.Serve(lis) }()
	log.Info("serving ADS; nothing is sent until every source is read", attrs...)
	return nil
}

// stopGracefully lets the ADS streams end, for grace at most.
func stopGracefully(gs *grpc.Server, grace time.Duration) {
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		gs.Stop()
	}
}

// shutdownObs stops the metrics and health listener.
func shutdownObs(o *obs.Server) {
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = o.Shutdown(sctx)
}

// serveSources are the sources of the pipeline: the DSL directory and,
// with the API server, Kubernetes.
type serveSources struct {
	dir              *dsl.Dir
	kube             *kube.Source
	mux              *http.ServeMux
	log              *slog.Logger
	debounce, resync time.Duration
}

// newServeSources opens the sources; mux serves GET /routes from routes
// (unless keyless) to the callers RBAC allows with the API server, to
// those presenting --routes-token-file's token without it.
func newServeSources(f serveFlags, log *slog.Logger, standIn *tlscert.StandIn, mux *http.ServeMux, routes *routetable.Table) (serveSources, error) {
	d := dsl.NewDir(*f.dir, time.Now, splitList(*f.certDirs)...).ForGroup(*f.group)
	if standIn != nil {
		d.WithoutKeys(*standIn)
	}
	s := serveSources{dir: d, mux: mux, log: log, debounce: *f.debounce, resync: *f.resync}
	if !f.kube.Enabled() {
		return s, routesForToken(*f.routesTokenFile, standIn, mux, routes, log)
	}
	src, kc, err := newKubeSource(f.kube, *f.gatewayAPI, log, kube.Options{Group: *f.group, Namespaces: splitList(*f.namespaces), Now: time.Now, StandIn: standIn})
	if err != nil {
		return s, err
	}
	s.kube = src
	if standIn == nil {
		// GET /routes: the routes served, for the console, to callers
		// the API server authenticates and RBAC authorizes.
		mux.Handle("/routes", routesGuard(kc, log).Wrap(routes))
	}
	return s, nil
}

// names are the sources' names, as the Merger waits for them.
func (s serveSources) names() []string {
	if s.kube != nil {
		return []string{"dsl", "kubernetes"}
	}
	return []string{"dsl"}
}

// run starts every source, each publishing through its door of merger;
// their results go to errc.
func (s serveSources) run(ctx context.Context, merger *pipeline.Merger, errc chan<- error) {
	if s.kube != nil {
		fromKube := merger.For("kubernetes")
		go func() {
			errc <- s.kube.Run(ctx, func(ctx context.Context, cfg model.Config) []model.Problem {
				return fromKube.Publish(ctx, cfg).Problems
			})
		}()
	}
	rl := &dslsource.Reloader{Dir: s.dir, Server: merger.For("dsl"), Log: s.log}
	go func() { errc <- rl.Run(ctx, s.debounce, s.resync) }()
}

// sideServices are the services l7 serve runs beside ADS, each fed by a
// consumer of the pipeline: nil when off.
type sideServices struct {
	authz      *authz.Service
	rateLimits *configserver.Server
	done       []<-chan error
}

// startSideServices starts the authorization service (--authz-listen) and
// the rate limit service's configuration server (--ratelimit-xds-listen);
// both stop when ctx ends (wait for them with wait).
func startSideServices(ctx context.Context, log *slog.Logger, reg prometheus.Registerer, f serveFlags) (sideServices, error) {
	var s sideServices
	if *f.authzAddr != "" {
		svc, done, err := startAuthz(ctx, log, reg, *f.authzAddr, f.authz)
		if err != nil {
			return s, err
		}
		s.authz, s.done = svc, append(s.done, done)
	}
	if *f.rlXDS != "" {
		cs, done, err := startRateLimitConfigs(ctx, log, *f.rlXDS, *f.group)
		if err != nil {
			return s, err // the authorization service stops with ctx, as serve returns
		}
		s.rateLimits, s.done = cs, append(s.done, done)
	}
	return s, nil
}

// wait returns once every side service has stopped (ctx ended), with
// their errors.
func (s sideServices) wait() error {
	var err error
	for _, done := range s.done {
		err = errors.Join(err, <-done)
	}
	return err
}
