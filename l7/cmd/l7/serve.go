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
	"github.com/tlbproject/tlb/l7/authz/declare"
	"github.com/tlbproject/tlb/l7/certexpiry"
	"github.com/tlbproject/tlb/l7/gcpercent"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/ratelimitconfig"
	"github.com/tlbproject/tlb/l7/routetable"
	"github.com/tlbproject/tlb/l7/tlscert"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

const keylessUsage = "read no private key and no Secret: every certificate a gateway names is a stand-in, and no ADS is served (the l7 beside the rate limit service, with --ratelimit-xds-listen); it resolves the group as the gateways' l7 does"

// serveFlags are the flags of "l7 serve".
type serveFlags struct {
	group, dir, certDirs, xdsAddr, metricsAddr *string
	certFile, keyFile, caFile, trustDomain     *string
	debounce, resync, grace                    *time.Duration
	namespaces, catchAll                       *string
	gatewayAPI, grpcClients                    *bool
	gcPercent                                  *int
	authzAddr, rlAddr, rlXDS, dnsResolvers     *string
	keyless                                    *bool
	routesTokenFile                            *string
	authz                                      authzOptions
	common                                     *cli.Common
	kube                                       *cli.Kube // also serve what the API server says
}

// errVersionPrinted is parseServeFlags' answer to --version: the build
// was printed and there is nothing to serve.
var errVersionPrinted = errors.New("version printed")

// parseServeFlags parses the flags of "l7 serve" and checks those that
// go together.
func parseServeFlags(args []string) (serveFlags, error) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	f := serveFlags{
		group:           fs.String("group", "", "the gateway group served (required): nothing of another group is built or sent"),
		dir:             fs.String("config", "", "DSL directory to serve and watch"),
		certDirs:        fs.String("cert-dir", defaultCertDir, certDirUsage),
		xdsAddr:         fs.String("xds-addr", "unix:///run/tlb/xds.sock", "ADS address: unix:///PATH (the pod's volume), or host:port with mutual TLS (--xds-tls-*)"),
		metricsAddr:     fs.String("metrics-addr", "127.0.0.1:9480", "address for /metrics, /healthz, /readyz and /routes (the routes served, as JSON: with the API server to callers RBAC lets get "+routesPath+", without it to callers with the token of --routes-token-file)"),
		certFile:        fs.String("xds-tls-cert", "", "server certificate for ADS (mutual TLS)"),
		keyFile:         fs.String("xds-tls-key", "", "server key for ADS"),
		caFile:          fs.String("xds-client-ca", "", "CA that signs client certificates for ADS"),
		trustDomain:     fs.String("trust-domain", xds.DefaultTrustDomain, "SPIFFE trust domain of client certificates (spiffe://TD/tlb/l7/KIND/GROUP)"),
		debounce:        fs.Duration("debounce", 200*time.Millisecond, "wait after a file change before reloading"),
		resync:          fs.Duration("resync", time.Minute, "reload the directory at least this often"),
		grace:           fs.Duration("shutdown-grace", 10*time.Second, "time for streams to end on SIGTERM"),
		namespaces:      fs.String("namespaces", "", "comma-separated namespaces whose Services and TLS Secrets are watched (default: all)"),
		gatewayAPI:      fs.Bool("gateway-api", true, "with the API server, also serve the group's Gateway API Gateways and routes when their CRDs are installed"),
		catchAll:        fs.String("catch-all-namespaces", "", "comma-separated namespaces that may serve the catch-all host \"*\""),
		gcPercent:       fs.Int("gc-percent", gcpercent.Default, "garbage collector target (GOGC wins when set)"),
		authzAddr:       fs.String("authz-listen", "", "serve the authorization service (ext_authz of routes with interceptors) on this unix socket: unix:///run/tlb/authz.sock (what l7 bootstrap points Envoy at); default off"),
		authz:           authzFlags(fs),
		grpcClients:     fs.Bool("grpc-clients", false, "also serve proxyless gRPC clients of the group (an l7 off the gateway pods, with mutual TLS)"),
		rlAddr:          fs.String("ratelimit-address", "", rateLimitAddressUsage),
		rlXDS:           fs.String("ratelimit-xds-listen", "", rateLimitXDSUsage),
		keyless:         fs.Bool("keyless", false, keylessUsage),
		dnsResolvers:    fs.String("dns-resolvers", "", dnsResolversUsage),
		routesTokenFile: fs.String("routes-token-file", "", "without the API server: serve /routes on the --metrics-addr listener to callers whose bearer token is this file's content (at least 16 bytes, re-read on every request; the console's --l7-token-file). With the API server, RBAC decides instead"),
		common:          cli.Register(fs, "l7", cli.FormatJSON, "schema", xds.Generation()),
		kube:            cli.RegisterKube(fs, cli.ClientGoDefaults),
	}
	_ = fs.Parse(args)
	if f.common.Version(os.Stdout) {
		return f, errVersionPrinted
	}
	if *f.dir == "" || *f.group == "" {
		return f, errors.New("serve: --group and --config are required (an empty directory is fine with Kubernetes)")
	}
	if *f.routesTokenFile != "" && f.kube.Enabled() {
		return f, errors.New("serve: --routes-token-file is for file mode: with the API server, /routes is served to callers RBAC lets get " + routesPath)
	}
	if *f.keyless && (*f.authzAddr != "" || *f.grpcClients) {
		return f, errors.New("serve: --keyless serves no gateway: it takes neither --authz-listen nor --grpc-clients")
	}
	return f, nil
}

// kinds are the kinds of client served.
func (f serveFlags) kinds() []translate.Kind {
	if *f.grpcClients {
		return []translate.Kind{translate.Gateway, translate.GRPC}
	}
	return []translate.Kind{translate.Gateway}
}

// resolveOptions are the operator's rules the one resolve applies.
func (f serveFlags) resolveOptions() (model.Options, error) {
	opts, err := rateLimitOptions(model.Options{CatchAllNamespaces: splitList(*f.catchAll)}, *f.rlAddr)
	if err != nil {
		return opts, err
	}
	return dnsResolversOption(opts, *f.dnsResolvers)
}

// standIn is the stand-in certificate of --keyless; nil without it.
func (f serveFlags) standIn() (*tlscert.StandIn, error) {
	if !*f.keyless {
		return nil, nil
	}
	si, err := tlscert.NewStandIn(time.Now())
	return &si, err
}

// runServe wires the pipeline of "l7 serve" (l7/pipeline):
//
//	sources (DSL directory, Kubernetes) -> merge -> one resolve -> consumers, in order:
//	  authorization service's declarations -> xDS snapshots -> certificate expiry -> route table -> rate limit service's configuration
func runServe(args []string) error {
	f, err := parseServeFlags(args)
	if errors.Is(err, errVersionPrinted) {
		return nil
	}
	if err != nil {
		return err
	}
	resolveOpts, err := f.resolveOptions()
	if err != nil {
		return err
	}
	log := f.common.Logger(os.Stderr).With("group", *f.group)
	gcpercent.Set(*f.gcPercent)
	standIn, err := f.standIn()
	if err != nil {
		return err
	}
	ads, err := newADSListener(*f.xdsAddr, *f.certFile, *f.keyFile, *f.caFile)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	o := obs.NewServer(*f.metricsAddr, log)
	srv := xds.New(ctx, log, o.Registry, time.Now, xds.Options{Group: *f.group, TrustDomain: *f.trustDomain, Kinds: f.kinds()})
	routes := routetable.New(*f.group)
	src, err := newServeSources(f, log, standIn, o.Handler(), routes)
	if err != nil {
		return err
	}
	side, err := startSideServices(ctx, log, o.Registry, f)
	if err != nil {
		return err
	}

	// The consumers of each resolved change, in the order they run.
	var consumers []pipeline.Consumer
	if side.authz != nil { // the service learns what the operator declared before Envoy gets the routes that use it
		consumers = append(consumers, declare.To{Declarer: side.authz, Group: *f.group})
	}
	consumers = append(consumers, xdsbuild.New(srv)) // translate, validate, swap the snapshot of each kind of client
	if standIn == nil {
		consumers = append(consumers, certexpiry.New(o.Registry, time.Now), routes)
	}
	if side.rateLimits != nil { // after xDS: keeps its last good limits when the gateways keep theirs
		consumers = append(consumers, &ratelimitconfig.Consumer{Group: *f.group, Configs: side.rateLimits, Log: log})
	}
	merger := pipeline.NewMerger(pipeline.New(model.NewResolver(), resolveOpts, time.Now, consumers...), o, log, o.Registry, src.names()...)

	if _, err := o.Start(src.mux); err != nil {
		return err
	}
	defer shutdownObs(o)
	gs := grpc.NewServer(adsServerOptions(ads.creds)...)
	srv.Register(gs)
	errc := make(chan error, 3)
	if err := serveADS(log, gs, ads, standIn == nil, errc, "addr", *f.xdsAddr, "config", *f.dir, "generation", srv.Generation(), "sources", src.names()); err != nil {
		return err
	}
	src.run(ctx, merger, errc)
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	o.SetReady(false, "shutting down")
	stopGracefully(gs, *f.grace)
	stop() // the side services stop with ctx
	return errors.Join(err, side.wait())
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
