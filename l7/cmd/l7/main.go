// Command l7 is the TLB L7 control plane: it serves the gateway DSL of a
// directory to Envoy gateways and proxyless gRPC clients over ADS, and
// renders a group's config as Envoy YAML.
//
//	l7 serve --group G --config DIR [--xds-addr unix:///run/tlb/xds.sock] [--metrics-addr 127.0.0.1:9480] [--kubeconfig F | --in-cluster] [--namespaces a,b]
//	         [--authz-listen unix:///run/tlb/authz.sock --authz-redis HOST:PORT [--authz-redis-password-file F]]
//	         [--ratelimit-address HOST:PORT] [--ratelimit-xds-listen 127.0.0.1:PORT] [--dns-resolvers IP:PORT,...]
//	l7 render --config DIR --group G [--kind gateway|grpc] [--format bootstrap|xds|ratelimit] [--ratelimit-address HOST:PORT] [--dns-resolvers IP:PORT,...]
//	l7 bootstrap --group G --out FILE [--stats-address IP:9902] [--xds-socket P] [--admin-socket P]
//	l7 envoy [--admin unix:///run/tlb/envoy-admin.sock] [--l4-wait 10s] [--quiet 3s] [--drain-deadline 60s] -- envoy -c bootstrap.yaml
//	l7 drain [--admin unix:///run/tlb/envoy-admin.sock] [--l4-wait 10s] [--quiet 3s] [--drain-deadline 60s]
//	l7 install DIR
//	l7 version      (the schema generation; --version: the build)
//
// "l7 envoy" runs Envoy as a child and, on SIGTERM, drains it through the
// admin API before stopping it (on a host where a supervisor such as
// systemd starts it); "l7 drain" drains once and returns (the gateway
// pod's preStop hook). "l7 install DIR" copies this executable to
// DIR/l7 (the image has no cp), so the Envoy container can run it.
//
// It only wires flags, listeners and signals; the logic lives in the l7
// packages.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/tlbproject/tlb/internal/buildinfo"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/l7/drain"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/kube"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/serve"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = runServe(os.Args[2:])
	case "render":
		err = runRender(os.Args[2:])
	case "envoy":
		err = runEnvoy(os.Args[2:])
	case "drain":
		err = runDrain(os.Args[2:])
	case "install":
		err = runInstall(os.Args[2:])
	case "bootstrap":
		err = runBootstrap(os.Args[2:])
	case "gateway-controller":
		err = runGatewayController(os.Args[2:])
	case "version":
		fmt.Println(xds.Generation())
	case "--version":
		fmt.Println(buildinfo.Read("l7"), "schema", xds.Generation())
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "l7:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: l7 serve --group G --config DIR [flags] | l7 render --config DIR --group G [flags] | l7 bootstrap --group G --out FILE [flags] | l7 envoy [flags] -- envoy ARGS | l7 drain [flags] | l7 install DIR | l7 gateway-controller [flags] | l7 version")
	os.Exit(2)
}

// defaultCertDir is where deploy/ mounts the TLS Secrets of DSL gateways.
const defaultCertDir = "/etc/tlb/certs"

const certDirUsage = "comma-separated directories besides --config that DSL certFile/keyFile may name (symlinks resolved)"

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func runServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	group := fs.String("group", "", "the gateway group served (required): nothing of another group is built or sent")
	dir := fs.String("config", "", "DSL directory to serve and watch")
	certDirs := fs.String("cert-dir", defaultCertDir, certDirUsage)
	xdsAddr := fs.String("xds-addr", "unix:///run/tlb/xds.sock", "ADS address: unix:///PATH (the pod's volume), loopback host:port, or host:port with --xds-tls-*")
	metricsAddr := fs.String("metrics-addr", "127.0.0.1:9480", "address for /metrics, /healthz, /readyz and /routes (the routes served, as JSON)")
	certFile := fs.String("xds-tls-cert", "", "server certificate for ADS (mutual TLS)")
	keyFile := fs.String("xds-tls-key", "", "server key for ADS")
	caFile := fs.String("xds-client-ca", "", "CA that signs client certificates for ADS")
	trustDomain := fs.String("trust-domain", xds.DefaultTrustDomain, "SPIFFE trust domain of client certificates (spiffe://TD/tlb/l7/KIND/GROUP)")
	debounce := fs.Duration("debounce", 200*time.Millisecond, "wait after a file change before reloading")
	resync := fs.Duration("resync", time.Minute, "reload the directory at least this often")
	grace := fs.Duration("shutdown-grace", 10*time.Second, "time for streams to end on SIGTERM")
	kubeconfig := fs.String("kubeconfig", "", "also serve Services that opt into L7 from the API server of this kubeconfig")
	inCluster := fs.Bool("in-cluster", false, "also serve Services that opt into L7 from the API server of the pod's service account")
	namespaces := fs.String("namespaces", "", "comma-separated namespaces whose Services and TLS Secrets are watched (default: all)")
	gatewayAPI := fs.Bool("gateway-api", true, "with the API server, also serve the group's Gateway API Gateways and routes when their CRDs are installed")
	catchAll := fs.String("catch-all-namespaces", "", "comma-separated namespaces that may serve the catch-all host \"*\"")
	gcPercent := fs.Int("gc-percent", serve.DefaultGCPercent, "garbage collector target (GOGC wins when set)")
	authzAddr := fs.String("authz-listen", "", "serve the authorization service (ext_authz of routes with interceptors) here: unix:///run/tlb/authz.sock (what l7 bootstrap points Envoy at) or loopback host:port; default off")
	authzRedis := fs.String("authz-redis", "", "host:port of the Redis holding the sessions of sessionInterceptor (with --authz-listen)")
	authzRedisPassword := fs.String("authz-redis-password-file", "", "file holding the password of --authz-redis (Redis AUTH; a mounted Secret key); default none")
	grpcClients := fs.Bool("grpc-clients", false, "also serve proxyless gRPC clients of the group (an l7 off the gateway pods, with mutual TLS)")
	rlAddr := fs.String("ratelimit-address", "", rateLimitAddressUsage)
	rlXDS := fs.String("ratelimit-xds-listen", "", rateLimitXDSUsage)
	dnsResolvers := fs.String("dns-resolvers", "", dnsResolversUsage)
	_ = fs.Parse(args)
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
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("group", *group)
	serve.SetGCPercent(*gcPercent)

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
	kubeOn := *kubeconfig != "" || *inCluster
	if kubeOn {
		sources = append(sources, "kubernetes")
	}
	expiry := serve.NewCertificateExpiry(o.Registry, time.Now)
	routes := serve.NewRouteTable(*group)
	pub := routes.Publishing(expiry.Publishing(srv))
	var rlDone <-chan error
	if *rlXDS != "" {
		if pub, rlDone, err = startRateLimitConfigs(ctx, log, *rlXDS, *group, resolveOpts, pub); err != nil {
			return err
		}
	}
	merger := serve.NewMerger(pub, o, log, o.Registry, sources...)
	// GET /routes: the routes served, for the console (read-only, no keys).
	mux := o.Handler()
	mux.Handle("/routes", routes)
	if _, err := o.Start(mux); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = o.Shutdown(sctx)
	}()

	opts := []grpc.ServerOption{
		grpc.MaxConcurrentStreams(10000),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
	}
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	gs := grpc.NewServer(opts...)
	srv.Register(gs)
	lis, err := listenADS(network, address)
	if err != nil {
		return err
	}
	log.Info("serving ADS; nothing is sent until every source is read", "addr", *xdsAddr, "config", *dir, "generation", srv.Generation(), "sources", sources)

	errc := make(chan error, 3)
	rl := &serve.Reloader{Dir: dsl.NewDir(*dir, time.Now, splitList(*certDirs)...), Server: merger.For("dsl"), Log: log}
	if kubeOn {
		src, err := newKubeSource(*kubeconfig, *inCluster, *gatewayAPI, log, kube.Options{Group: *group, Namespaces: splitList(*namespaces), Now: time.Now})
		if err != nil {
			return err
		}
		fromKube := merger.For("kubernetes")
		go func() {
			errc <- src.Run(ctx, func(ctx context.Context, cfg model.Config) []model.Problem {
				return fromKube.Publish(ctx, cfg).Problems
			})
		}()
	}
	var authzDone <-chan error
	if *authzAddr != "" {
		if authzDone, err = startAuthz(ctx, log, o.Registry, *authzAddr, *authzRedis, *authzRedisPassword); err != nil {
			return err
		}
	}
	go func() { errc <- gs.Serve(lis) }()
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

// xdsCredentials refuses a TCP ADS address that is not loopback without
// mutual TLS. A unix socket is reached only through the pod's volume.
func xdsCredentials(network, addr, cert, key, ca string) (credentials.TransportCredentials, error) {
	if cert == "" && key == "" && ca == "" {
		if network == "unix" {
			return nil, nil
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("--xds-addr %q: %w", addr, err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("--xds-addr %s is not loopback: set --xds-tls-cert, --xds-tls-key and --xds-client-ca", addr)
		}
		return nil, nil
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

func runEnvoy(args []string) error {
	fs := flag.NewFlagSet("envoy", flag.ExitOnError)
	drainer := drainerFlags(fs)
	grace := fs.Duration("stop-grace", 10*time.Second, "time for Envoy to exit after SIGTERM before SIGKILL")
	_ = fs.Parse(args)
	if fs.NArg() == 0 {
		return errors.New("envoy: give the Envoy command after --")
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	d, err := drainer(log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	sup := &drain.Supervisor{Cmd: cmd, Log: log, StopGrace: *grace, Drainer: d}
	return sup.Run(ctx)
}
