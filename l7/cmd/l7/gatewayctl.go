package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/internal/leader"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/l7/gatewayctl"
)

// runGatewayController runs `l7 gateway-controller`: the Gateway API
// controller (l7/gatewayctl) with leader election. It only wires.
func runGatewayController(args []string) error {
	host, _ := os.Hostname()
	fs := flag.NewFlagSet("gateway-controller", flag.ExitOnError)
	var (
		kubeconfig  = fs.String("kubeconfig", "", "kubeconfig file; empty uses the in-cluster service account")
		metricsAddr = fs.String("metrics-addr", "127.0.0.1:9480", "address for /metrics, /healthz and /readyz")
		leaderElect = fs.Bool("leader-elect", true, "elect a leader through a Lease; only the leader writes")
		leaseNS     = fs.String("leader-election-namespace", podEnvOr("POD_NAMESPACE", "tlb-system"), "namespace of the Lease")
		leaseName   = fs.String("lease-name", "tlb-gateway-controller", "name of the Lease")
		identity    = fs.String("identity", podEnvOr("POD_NAME", host), "this replica's name in the Lease and in Events")
		qps         = fs.Float64("kube-api-qps", 200, "API server requests per second (client-side limit; a status write per changed object)")
		burst       = fs.Int("kube-api-burst", 400, "API server requests allowed at once above kube-api-qps")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("identity", *identity)

	cfg, err := sharedkube.RESTConfig(*kubeconfig, false, "tlb-gateway-controller/"+*identity)
	if err != nil {
		return err
	}
	leClient, err := leader.NewClient(cfg)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build Kubernetes client: %w", err)
	}
	gc, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build Gateway API client: %w", err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build dynamic client: %w", err)
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

	ctrl, err := gatewayctl.New(gatewayctl.Options{Kube: kc, Gateway: gc, Dynamic: dc, Log: log, Registry: srv.Registry, Identity: *identity})
	if err != nil {
		return err
	}
	lead := func(ctx context.Context) {
		if err := ctrl.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("gateway controller stopped", "err", err)
		}
	}
	if !*leaderElect {
		lead(ctx)
		return nil
	}
	err = leader.Run(ctx, leader.Election{
		Client: leClient, Namespace: *leaseNS, Name: *leaseName, Identity: *identity,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second, Log: log, Work: "reconciling Gateways",
	}, lead)
	if err != nil {
		return err
	}
	if ctx.Err() == nil {
		return errors.New("lost the Lease")
	}
	return nil
}

// podEnvOr returns the environment variable k, or def when it is unset.
func podEnvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
