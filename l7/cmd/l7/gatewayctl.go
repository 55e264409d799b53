package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/internal/leader"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/l7/gatewayctl"
	"github.com/tlbproject/tlb/l7/xds"
)

// runGatewayController runs `l7 gateway-controller`: the Gateway API
// controller (l7/gatewayctl) with leader election. It only wires.
func runGatewayController(args []string) error {
	fs := flag.NewFlagSet("gateway-controller", flag.ExitOnError)
	common := cli.Register(fs, "l7", cli.FormatJSON, "schema", xds.Generation())
	// A status write per changed object: a controller's rate limit, with
	// a burst that lets the sync after 500 new routes write at once
	// (its 600 writes and their Events overran 200/400).
	kf := cli.RegisterKube(fs, cli.KubeDefaults{QPS: 500, Burst: 1000})
	var lf leader.Flags
	lf.Register(fs, "tlb-gateway-controller")
	metricsAddr := fs.String("metrics-addr", "127.0.0.1:9480", "address for /metrics, /healthz and /readyz")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if common.Version(os.Stdout) {
		return nil
	}
	log := common.Logger(os.Stderr).With("identity", lf.Identity)
	lf.Warn(log)

	opts, leClient, err := gatewayClients(kf, lf.Identity)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := obs.NewServer(*metricsAddr, log)
	if _, err := srv.Start(nil); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	srv.SetReady(true, "")

	opts.Log, opts.Registry, opts.Identity = log, srv.Registry, lf.Identity
	ctrl, err := gatewayctl.New(opts)
	if err != nil {
		return err
	}
	return lf.Lead(ctx, leClient, log, "reconciling Gateways", nil, func(ctx context.Context) {
		if err := ctrl.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("gateway controller stopped", "err", err)
		}
	})
}

// gatewayClients builds the controller's clients (in its Options) and the
// leader election's.
func gatewayClients(kf *cli.Kube, identity string) (gatewayctl.Options, kubernetes.Interface, error) {
	cfg, err := kf.RESTConfig("tlb-gateway-controller/" + identity)
	if err != nil {
		return gatewayctl.Options{}, nil, err
	}
	leClient, err := leader.NewClient(cfg)
	if err != nil {
		return gatewayctl.Options{}, nil, err
	}
	var o gatewayctl.Options
	if o.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return o, nil, fmt.Errorf("build Kubernetes client: %w", err)
	}
	if o.Gateway, err = gwclient.NewForConfig(cfg); err != nil {
		return o, nil, fmt.Errorf("build Gateway API client: %w", err)
	}
	if o.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return o, nil, fmt.Errorf("build dynamic client: %w", err)
	}
	return o, leClient, nil
}
