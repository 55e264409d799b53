// Command l7 is the TLB L7 control plane: it serves the gateway DSL of a
// directory to Envoy gateways and proxyless gRPC clients over ADS, and
// renders a group's config as Envoy YAML.
//
//	l7 serve --group G --config DIR [--xds-addr unix:///run/tlb/xds.sock] [--metrics-addr 127.0.0.1:9480] [--kubeconfig F | --in-cluster] [--namespaces a,b]
//	         [--authz-listen unix:///run/tlb/authz.sock --authz-redis HOST:PORT [--authz-redis-password-file F]]
//	         [--authz-redis-user U] [--ratelimit-address HOST:PORT] [--ratelimit-xds-listen unix:///run/tlb/ratelimit-xds.sock] [--keyless]
//	         [--dns-resolvers IP:PORT,...]
//	l7 render --config DIR --group G [--kind gateway|grpc] [--format bootstrap|xds|ratelimit] [--ratelimit-address HOST:PORT] [--dns-resolvers IP:PORT,...]
//	l7 bootstrap --group G --out FILE [--stats-address IP:9902] [--xds-socket P] [--admin-socket P]
//	l7 envoy [--admin unix:///run/tlb/envoy-admin.sock] [--l4-wait 10s] [--quiet 3s] [--drain-deadline 60s] -- envoy -c bootstrap.yaml
//	l7 drain [--admin unix:///run/tlb/envoy-admin.sock] [--l4-wait 10s] [--quiet 3s] [--drain-deadline 60s]
//	l7 install DIR
//	l7 rundir --owner UID:GID DIR
//	l7 version      (the schema generation; --version: the build)
//
// "l7 envoy" runs Envoy as a child and, on SIGTERM, drains it through the
// admin API before stopping it (on a host where a supervisor such as
// systemd starts it); "l7 drain" drains once and returns (the gateway
// pod's preStop hook). "l7 install DIR" copies this executable to
// DIR/l7 (the image has no cp), so the Envoy container can run it.
// "l7 rundir" gives the node directory the gateway's l7 and Envoy pods
// share to their user.
//
// It only wires flags, listeners and signals; the logic lives in the l7
// packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tlbproject/tlb/internal/buildinfo"
	"github.com/tlbproject/tlb/l7/drain"
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
	case "rundir":
		err = runRunDir(os.Args[2:])
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
	fmt.Fprintln(os.Stderr, "usage: l7 serve --group G --config DIR [flags] | l7 render --config DIR --group G [flags] | l7 bootstrap --group G --out FILE [flags] | l7 envoy [flags] -- envoy ARGS | l7 drain [flags] | l7 install DIR | l7 rundir --owner UID:GID DIR | l7 gateway-controller [flags] | l7 version")
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
