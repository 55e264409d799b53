// Command ipam runs the TLB IPAM controller: it gives VIPs to LoadBalancer
// Services of class tlb.io/l4 from VIPPools and L4Clusters, with leader
// election so that one replica allocates at a time. It only wires flags,
// clients and signals; the logic lives in ipam/controller.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/tlbproject/tlb/internal/buildinfo"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	election "github.com/tlbproject/tlb/internal/leader"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/ipam"
	"github.com/tlbproject/tlb/ipam/apicheck"
	"github.com/tlbproject/tlb/ipam/controller"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "version") {
		fmt.Println(buildinfo.Read("ipam"))
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ipam:", err)
		os.Exit(1)
	}
}

func run() error {
	host, _ := os.Hostname()
	var (
		kubeconfig  = flag.String("kubeconfig", "", "kubeconfig file; empty uses the in-cluster service account")
		metricsAddr = flag.String("metrics-addr", "127.0.0.1:9470", "address for /metrics, /healthz and /readyz")
		defaultEnv  = flag.String("default-environment", "", "environment for Services that name no environment, pool or VIP; empty makes that an error")
		workers     = flag.Int("workers", 4, "Services synced in parallel")
		qps         = flag.Float64("kube-api-qps", defaultQPS, "API server requests per second (client-side limit; one write and one Event per allocation)")
		burst       = flag.Int("kube-api-burst", defaultBurst, "API server requests allowed at once above kube-api-qps")
		leaderElect = flag.Bool("leader-elect", true, "elect a leader through a Lease; only the leader allocates")
		leaseNS     = flag.String("lease-namespace", envOr("POD_NAMESPACE", "tlb-system"), "namespace of the Lease")
		leaseName   = flag.String("lease-name", "tlb-ipam", "name of the Lease")
		identity    = flag.String("identity", envOr("POD_NAME", host), "this replica's name in the Lease")
		leaseDur    = flag.Duration("lease-duration", 15*time.Second, "how long a Lease lasts without renewal")
		renew       = flag.Duration("renew-deadline", 10*time.Second, "how long the leader tries to renew before giving up")
		retry       = flag.Duration("retry-period", 2*time.Second, "how often replicas try to take or renew the Lease")
	)
	flag.Parse()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("identity", *identity)

	cfg, err := sharedkube.RESTConfig(*kubeconfig, false, "tlb-ipam/"+*identity)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	// Services, Events and Leases travel as protobuf, which costs the API
	// server and the controller less than JSON when thousands of Services
	// change at once; VIPPools and L4Clusters (the dynamic client) stay JSON.
	pbCfg := rest.CopyConfig(cfg)
	pbCfg.ContentType = runtime.ContentTypeProtobuf
	pbCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := kubernetes.NewForConfig(pbCfg)
	if err != nil {
		return fmt.Errorf("build Kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build dynamic client: %w", err)
	}
	leClient, err := election.NewClient(pbCfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv := obs.NewServer(*metricsAddr, log)
	leader := prometheus.NewGauge(prometheus.GaugeOpts{Name: "tlb_ipam_leader", Help: "1 while this replica holds the Lease and allocates."})
	srv.Registry.MustRegister(leader)
	if _, err := srv.Start(nil); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	// Ready means "able to serve": the API server answers. A standby
	// replica is ready too. While the API server does not answer, the
	// checker logs and retries with backoff and /readyz says why.
	srv.SetReady(false, "starting: API server "+cfg.Host+" not reached yet")
	reached := make(chan struct{})
	var once sync.Once
	checker := apicheck.NewChecker(versionProber{client.Discovery().RESTClient()}, cfg.Host, log, clock.RealClock{},
		func(ok bool, reason string) {
			srv.SetReady(ok, reason)
			if ok {
				once.Do(func() { close(reached) })
			}
		})
	go checker.Run(ctx)
	select {
	case <-reached:
	case <-ctx.Done():
		return nil
	}

	ctrl, err := controller.New(controller.Options{
		Client: client, Dynamic: dyn, Log: log, Registry: srv.Registry,
		DefaultEnvironment: ipam.Environment(*defaultEnv), Workers: *workers, Identity: *identity,
	})
	if err != nil {
		return err
	}
	lead := func(ctx context.Context) {
		if err := ctrl.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("controller stopped", "err", err)
		}
	}
	if !*leaderElect {
		leader.Set(1)
		lead(ctx)
		return nil
	}
	err = election.Run(ctx, election.Election{
		Client: leClient, Namespace: *leaseNS, Name: *leaseName, Identity: *identity,
		LeaseDuration: *leaseDur, RenewDeadline: *renew, RetryPeriod: *retry, Log: log, Work: "allocating VIPs",
		OnLeading: func(b bool) {
			if b {
				leader.Set(1)
			} else {
				leader.Set(0)
			}
		},
	}, lead)
	if err != nil {
		return err
	}
	if ctx.Err() == nil {
		// Leadership lost while still running: exit so the Pod restarts
		// with fresh state rather than allocating from a stale view.
		return errors.New("lost the Lease")
	}
	return nil
}

// Client-side rate limits, sized for a controller that owns thousands of
// Services: an allocation costs one write and one Event, so 1,000 Services
// created at once need 2,000 requests; 200/s with a burst of 400 serves
// them in about 8 s, well under the API server's own limits (max
// in-flight, API Priority and Fairness), which protect it either way.
const (
	defaultQPS   = 200
	defaultBurst = 400
)

// versionProber asks the API server for its /version, which every
// client may read (system:public-info-viewer).
type versionProber struct{ rc rest.Interface }

func (p versionProber) Probe(ctx context.Context) error {
	_, err := p.rc.Get().AbsPath("/version").DoRaw(ctx)
	return err
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
