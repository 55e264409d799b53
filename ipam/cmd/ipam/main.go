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
	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/internal/leader"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/ipam"
	"github.com/tlbproject/tlb/ipam/apicheck"
	"github.com/tlbproject/tlb/ipam/controller"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "version" {
		fmt.Println(buildinfo.Read("ipam"))
		return
	}
	common := cli.Register(flag.CommandLine, "ipam", cli.FormatJSON)
	kf := cli.RegisterKube(flag.CommandLine, cli.KubeDefaults{QPS: defaultQPS, Burst: defaultBurst})
	var lf leader.Flags
	lf.Register(flag.CommandLine, "tlb-ipam")
	o := options{
		metricsAddr: flag.String("metrics-addr", "127.0.0.1:9470", "address for /metrics, /healthz and /readyz"),
		defaultEnv:  flag.String("default-environment", "", "environment for Services that name no environment, pool or VIP; empty makes that an error"),
		workers:     flag.Int("workers", 4, "Services synced in parallel"),
	}
	flag.Parse()
	if common.Version(os.Stdout) {
		return
	}
	log := common.Logger(os.Stderr).With("identity", lf.Identity)
	lf.Warn(log)
	if err := run(log, kf, &lf, o); err != nil {
		fmt.Fprintln(os.Stderr, "ipam:", err)
		os.Exit(1)
	}
}

// options are ipam's own flags.
type options struct {
	metricsAddr, defaultEnv *string
	workers                 *int
}

// clients are the API server clients of the controller and of leader
// election.
type clients struct {
	host   string
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	leader kubernetes.Interface
}

func newClients(kf *cli.Kube, identity string) (clients, error) {
	cfg, err := kf.RESTConfig("tlb-ipam/" + identity)
	if err != nil {
		return clients{}, err
	}
	// Services, Events and Leases travel as protobuf, which costs the API
	// server and the controller less than JSON when thousands of Services
	// change at once; VIPPools and L4Clusters (the dynamic client) stay JSON.
	pbCfg := rest.CopyConfig(cfg)
	pbCfg.ContentType = runtime.ContentTypeProtobuf
	pbCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c := clients{host: cfg.Host}
	if c.kube, err = kubernetes.NewForConfig(pbCfg); err != nil {
		return clients{}, fmt.Errorf("build Kubernetes client: %w", err)
	}
	if c.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return clients{}, fmt.Errorf("build dynamic client: %w", err)
	}
	if c.leader, err = leader.NewClient(pbCfg); err != nil {
		return clients{}, err
	}
	return c, nil
}

func run(log *slog.Logger, kf *cli.Kube, lf *leader.Flags, o options) error {
	c, err := newClients(kf, lf.Identity)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv := obs.NewServer(*o.metricsAddr, log)
	leading := prometheus.NewGauge(prometheus.GaugeOpts{Name: "tlb_ipam_leader", Help: "1 while this replica holds the Lease and allocates."})
	srv.Registry.MustRegister(leading)
	if _, err := srv.Start(nil); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if !waitForAPIServer(ctx, c, srv, log) {
		return nil
	}
	ctrl, err := controller.New(controller.Options{
		Client: c.kube, Dynamic: c.dyn, Log: log, Registry: srv.Registry,
		DefaultEnvironment: ipam.Environment(*o.defaultEnv), Workers: *o.workers, Identity: lf.Identity,
	})
	if err != nil {
		return err
	}
	return lf.Lead(ctx, c.leader, log, "allocating VIPs", func(b bool) {
		if b {
			leading.Set(1)
		} else {
			leading.Set(0)
		}
	}, func(ctx context.Context) {
		if err := ctrl.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("controller stopped", "err", err)
		}
	})
}

// waitForAPIServer returns once the API server answers (true), or when
// ctx ends (false). Ready means "able to serve": the API server answers.
// A standby replica is ready too. While the API server does not answer,
// the checker logs and retries with backoff and /readyz says why.
func waitForAPIServer(ctx context.Context, c clients, srv *obs.Server, log *slog.Logger) bool {
	srv.SetReady(false, "starting: API server "+c.host+" not reached yet")
	reached := make(chan struct{})
	var once sync.Once
	checker := apicheck.NewChecker(versionProber{c.kube.Discovery().RESTClient()}, c.host, log, clock.RealClock{},
		func(ok bool, reason string) {
			srv.SetReady(ok, reason)
			if ok {
				once.Do(func() { close(reached) })
			}
		})
	go checker.Run(ctx)
	select {
	case <-reached:
		return true
	case <-ctx.Done():
		return false
	}
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
