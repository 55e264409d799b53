package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/l7/authz"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/kube"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/serve"
	"github.com/tlbproject/tlb/l7/tlscert"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
)

const keylessUsage = "read no private key and no Secret: every certificate a gateway names is a stand-in, and no ADS is served (the l7 beside the rate limit service, with --ratelimit-xds-listen); it resolves the group as the gateways' l7 does"

func runServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	group := fs.String("group", "", "the gateway group served (required): nothing of another group is built or sent")
	dir := fs.String("config", "", "DSL directory to serve and watch")
	certDirs := fs.String("cert-dir", defaultCertDir, certDirUsage)
	xdsAddr := fs.String("xds-addr", "unix:///run/tlb/xds.sock", "ADS address: unix:///PATH (the pod's volume), or host:port with mutual TLS (--xds-tls-*)")
	metricsAddr := fs.String("metrics-addr", "127.0.0.1:9480", "address for /metrics, /healthz, /readyz and, with the API server, /routes (the routes served, as JSON, to callers RBAC lets get "+routesPath+")")
	certFile := fs.String("xds-tls-cert", "", "server certificate for ADS (mutual TLS)")
	keyFile := fs.String("xds-tls-key", "", "server key for ADS")
	caFile := fs.String("xds-client-ca", "", "CA that signs client certificates for ADS")
	trustDomain := fs.String("trust-domain", xds.DefaultTrustDomain, "SPIFFE trust domain of client certificates (spiffe://TD/tlb/l7/KIND/GROUP)")
	debounce := fs.Duration("debounce", 200*time.Millisecond, "wait after a file change before reloading")
	resync := fs.Duration("resync", time.Minute, "reload the directory at least this often")
	grace := fs.Duration("shutdown-grace", 10*time.Second, "time for streams to end on SIGTERM")
	common := cli.Register(fs, "l7", cli.FormatJSON, "schema", xds.Generation())
	kf := cli.RegisterKube(fs, cli.ClientGoDefaults) // also serve what the API server says
	namespaces := fs.String("namespaces", "", "comma-separated namespaces whose Services and TLS Secrets are watched (default: all)")
	gatewayAPI := fs.Bool("gateway-api", true, "with the API server, also serve the group's Gateway API Gateways and routes when their CRDs are installed")
	catchAll := fs.String("catch-all-namespaces", "", "comma-separated namespaces that may serve the catch-all host \"*\"")
	gcPercent := fs.Int("gc-percent", serve.DefaultGCPercent, "garbage collector target (GOGC wins when set)")
	authzAddr := fs.String("authz-listen", "", "serve the authorization service (ext_authz of routes with interceptors) on this unix socket: unix:///run/tlb/authz.sock (what l7 bootstrap points Envoy at); default off")
	authzOpts := authzFlags(fs)
	grpcClients := fs.Bool("grpc-clients", false, "also serve proxyless gRPC clients of the group (an l7 off the gateway pods, with mutual TLS)")
	rlAddr := fs.String("ratelimit-address", "", rateLimitAddressUsage)
	rlXDS := fs.String("ratelimit-xds-listen", "", rateLimitXDSUsage)
	keyless := fs.Bool("keyless", false, keylessUsage)
	dnsResolvers := fs.String("dns-resolvers", "", dnsResolversUsage)
	_ = fs.Parse(args)
	if common.Version(os.Stdout) {
		return nil
	}
	if *dir == "" || *group == "" {
		return errors.New("serve: --group and --config are required (an empty directory is fine with Kubernetes)")
	}
	resolveOpts, err := rateLimitOptions(model.Options{CatchAllNamespaces: splitList(*catchAll)}, *rlAddr)
	if err != nil {
		return err
	}
	if resolveOpts, err = dnsResolversOption(resolveOpts, *dnsResolvers); err != nil {
		return err
	}
	kinds := []translate.Kind{translate.Gateway}
	if *grpcClients {
		kinds = append(kinds, translate.GRPC)
	}
	log := common.Logger(os.Stderr).With("group", *group)
	serve.SetGCPercent(*gcPercent)

	var standIn *tlscert.StandIn
	if *keyless {
		if *authzAddr != "" || *grpcClients {
			return errors.New("serve: --keyless serves no gateway: it takes neither --authz-listen nor --grpc-clients")
		}
		si, err := tlscert.NewStandIn(time.Now())
		if err != nil {
			return err
		}
		standIn = &si
	}
	network, address, err := xdsListenAddr(*xdsAddr)
	if err != nil {
		return err
	}
	creds, err := xdsCredentials(network, address, *certFile, *keyFile, *caFile)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	o := obs.NewServer(*metricsAddr, log)
	srv := xds.New(ctx, log, o.Registry, time.Now, xds.Options{
		Group: *group, TrustDomain: *trustDomain, Kinds: kinds,
		Resolve: resolveOpts,
	})
	sources := []string{"dsl"}
	kubeOn := kf.Enabled()
	if kubeOn {
		sources = append(sources, "kubernetes")
	}
	var kubeSrc *kube.Source
	mux := o.Handler()
	routes := serve.NewRouteTable(*group)
	var pub serve.Publisher = srv
	if standIn == nil {
		pub = routes.Publishing(serve.NewCertificateExpiry(o.Registry, time.Now).Publishing(srv))
	}
	if kubeOn {
		src, kc, err := newKubeSource(kf, *gatewayAPI, log, kube.Options{Group: *group, Namespaces: splitList(*namespaces), Now: time.Now, StandIn: standIn})
		if err != nil {
			return err
		}
		kubeSrc = src
		if standIn == nil {
			// GET /routes: the routes served, for the console, to callers
			// the API server authenticates and RBAC authorizes.
			mux.Handle("/routes", routesGuard(kc, log).Wrap(routes))
		}
	}
	var authzDone <-chan error
	if *authzAddr != "" {
		var svc *authz.Service
		if svc, authzDone, err = startAuthz(ctx, log, o.Registry, *authzAddr, authzOpts); err != nil {
			return err
		}
		// The service learns what the operator declared before Envoy
		// gets the routes that use it.
		pub = serve.DeclaringTo(svc, *group, pub)
	}
	var rlDone <-chan error
	if *rlXDS != "" {
		if pub, rlDone, err = startRateLimitConfigs(ctx, log, *rlXDS, *group, resolveOpts, pub); err != nil {
			return err
		}
	}
	merger := serve.NewMerger(pub, o, log, o.Registry, sources...)
	if _, err := o.Start(mux); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = o.Shutdown(sctx)
	}()

	gs := grpc.NewServer(adsServerOptions(creds)...)
	srv.Register(gs)
	errc := make(chan error, 3)
	if standIn == nil {
		lis, err := listenADS(network, address)
		if err != nil {
			return err
		}
		go func() { errc <- gs.Serve(lis) }()
		log.Info("serving ADS; nothing is sent until every source is read", "addr", *xdsAddr, "config", *dir, "generation", srv.Generation(), "sources", sources)
	} else {
		log.Info("keyless: no key is read and no ADS is served", "config", *dir, "sources", sources)
	}

	d := dsl.NewDir(*dir, time.Now, splitList(*certDirs)...).ForGroup(*group)
	if standIn != nil {
		d.WithoutKeys(*standIn)
	}
	rl := &serve.Reloader{Dir: d, Server: merger.For("dsl"), Log: log}
	if kubeSrc != nil {
		fromKube := merger.For("kubernetes")
		go func() {
			errc <- kubeSrc.Run(ctx, func(ctx context.Context, cfg model.Config) []model.Problem {
				return fromKube.Publish(ctx, cfg).Problems
			})
		}()
	}
	go func() { errc <- rl.Run(ctx, *debounce, *resync) }()
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	o.SetReady(false, "shutting down")
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(*grace):
		gs.Stop()
	}
	if authzDone != nil {
		stop() // the authorization service stops with ctx
		err = errors.Join(err, <-authzDone)
	}
	if rlDone != nil {
		stop() // the rate limit configuration server stops with ctx
		err = errors.Join(err, <-rlDone)
	}
	return err
}

// adsServerOptions are the ADS gRPC server's limits and keepalives, with
// mutual TLS when creds is set.
func adsServerOptions(creds credentials.TransportCredentials) []grpc.ServerOption {
	opts := []grpc.ServerOption{
		grpc.MaxConcurrentStreams(10000),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
	}
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	return opts
}

// xdsCredentials refuses a TCP ADS address without mutual TLS, loopback
// included: gateway pods share the node's network, so every process of
// the node reaches its loopback. A unix socket is reached only through the
// pod's volume.
func xdsCredentials(network, addr, cert, key, ca string) (credentials.TransportCredentials, error) {
	if cert == "" && key == "" && ca == "" {
		if network == "unix" {
			return nil, nil
		}
		return nil, fmt.Errorf("--xds-addr %s: a TCP address needs mutual TLS (--xds-tls-cert, --xds-tls-key and --xds-client-ca); use unix:///PATH in the pod", addr)
	}
	if network == "unix" {
		return nil, fmt.Errorf("--xds-addr %s: mutual TLS is for TCP; a unix socket is the pod's own", addr)
	}
	if cert == "" || key == "" || ca == "" {
		return nil, errors.New("--xds-tls-cert, --xds-tls-key and --xds-client-ca go together")
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("load ADS server certificate %s: %w", cert, err)
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("read ADS client CA %s: %w", ca, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ADS client CA %s holds no certificate", ca)
	}
	return credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{pair}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	}), nil
}
