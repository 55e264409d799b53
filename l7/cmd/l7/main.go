// Command l7 is the TLB L7 control plane: it serves the gateway DSL of a
// directory to Envoy gateways and proxyless gRPC clients over ADS, and
// renders a group's config as Envoy YAML.
//
//	l7 serve --config DIR [--xds-addr 127.0.0.1:18000] [--metrics-addr 127.0.0.1:9480] [--kubeconfig F | --in-cluster]
//	l7 render --config DIR --group G [--kind gateway|grpc] [--format bootstrap|xds]
//	l7 envoy [--admin http://127.0.0.1:9901] [--drain-deadline 60s] -- envoy -c bootstrap.yaml
//	l7 install DIR
//
// "l7 envoy" runs Envoy as a child and, on SIGTERM, drains it through the
// admin API before stopping it. "l7 install DIR" copies this executable to
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
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/tlbproject/tlb/l7/drain"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/serve"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/tlb/obs"
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
	case "install":
		err = runInstall(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "l7:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: l7 serve --config DIR [flags] | l7 render --config DIR --group G [flags] | l7 envoy [flags] -- envoy ARGS | l7 install DIR")
	os.Exit(2)
}

func runRender(args []string) error {
	fs := flag.NewFlagSet("render", flag.ExitOnError)
	dir := fs.String("config", "", "DSL directory")
	group := fs.String("group", "", "gateway group to render")
	kind := fs.String("kind", string(translate.Gateway), "client kind: gateway or grpc")
	format := fs.String("format", serve.FormatBootstrap, "bootstrap (static, for envoy --mode validate) or xds (resources as served)")
	_ = fs.Parse(args)
	if *dir == "" || *group == "" {
		return errors.New("render: --config and --group are required")
	}
	out, problems, err := serve.Render(*dir, *group, translate.Kind(*kind), *format)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "warning:", p)
	}
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}

func runServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	dir := fs.String("config", "", "DSL directory to serve and watch")
	xdsAddr := fs.String("xds-addr", "127.0.0.1:18000", "ADS listen address; not loopback requires --xds-tls-*")
	metricsAddr := fs.String("metrics-addr", "127.0.0.1:9480", "address for /metrics, /healthz and /readyz")
	certFile := fs.String("xds-tls-cert", "", "server certificate for ADS (mutual TLS)")
	keyFile := fs.String("xds-tls-key", "", "server key for ADS")
	caFile := fs.String("xds-client-ca", "", "CA that signs client certificates for ADS")
	debounce := fs.Duration("debounce", 200*time.Millisecond, "wait after a file change before reloading")
	resync := fs.Duration("resync", time.Minute, "reload the directory at least this often")
	grace := fs.Duration("shutdown-grace", 10*time.Second, "time for streams to end on SIGTERM")
	kubeconfig := fs.String("kubeconfig", "", "also serve Services that opt into L7 from the API server of this kubeconfig")
	inCluster := fs.Bool("in-cluster", false, "also serve Services that opt into L7 from the API server of the pod's service account")
	_ = fs.Parse(args)
	if *dir == "" {
		return errors.New("serve: --config is required (an empty directory is fine with Kubernetes)")
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))

	creds, err := xdsCredentials(*xdsAddr, *certFile, *keyFile, *caFile)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	o := obs.NewServer(*metricsAddr, log)
	srv := xds.New(ctx, log, o.Registry, time.Now)
	if _, err := o.Start(nil); err != nil {
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
	lis, err := net.Listen("tcp", *xdsAddr)
	if err != nil {
		return fmt.Errorf("listen for ADS on %s: %w", *xdsAddr, err)
	}

	merger := serve.NewMerger(srv)
	rl := &serve.Reloader{Dir: dsl.NewDir(*dir), Server: merger.For("dsl"), Log: log}
	first := rl.Reload(ctx)
	o.SetReady(true, "")
	log.Info("serving ADS", "addr", lis.Addr().String(), "config", *dir, "schema", xds.Schema,
		"fileErrors", len(first.FileErrors), "problems", len(first.Problems))

	errc := make(chan error, 3)
	if *kubeconfig != "" || *inCluster {
		src, err := newKubeSource(*kubeconfig, *inCluster, log)
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
	go func() { errc <- gs.Serve(lis) }()
	go func() { errc <- rl.Dir.Watch(ctx, *debounce, *resync, func() { rl.Reload(ctx) }) }()
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
	return err
}

// xdsCredentials refuses a non-loopback ADS address without mutual TLS.
func xdsCredentials(addr, cert, key, ca string) (credentials.TransportCredentials, error) {
	if cert == "" && key == "" && ca == "" {
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
	admin := fs.String("admin", "http://127.0.0.1:9901", "Envoy admin URL (loopback)")
	deadline := fs.Duration("drain-deadline", 60*time.Second, "longest wait for connections to close")
	poll := fs.Duration("poll", time.Second, "how often to read the connection count")
	grace := fs.Duration("stop-grace", 10*time.Second, "time for Envoy to exit after SIGTERM before SIGKILL")
	_ = fs.Parse(args)
	if fs.NArg() == 0 {
		return errors.New("envoy: give the Envoy command after --")
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	sup := &drain.Supervisor{
		Cmd: cmd, Log: log, StopGrace: *grace,
		Drainer: &drain.Drainer{Admin: *admin, Client: &http.Client{Timeout: 5 * time.Second}, Log: log,
			Poll: *poll, Deadline: *deadline, Now: time.Now},
	}
	return sup.Run(ctx)
}
