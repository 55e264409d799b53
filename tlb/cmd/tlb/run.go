package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os/signal"
	"syscall"
	"time"

	"github.com/moby/ipvs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/internal/procsys"
	"github.com/tlbproject/tlb/tlb/agent"
	"github.com/tlbproject/tlb/tlb/anyip"
	"github.com/tlbproject/tlb/tlb/config"
	"github.com/tlbproject/tlb/tlb/connections"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func runCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tlb run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "YAML configuration file (required)")
	common := cli.Register(fs, "tlb", cli.FormatText)
	once := fs.Bool("once", false, "reconcile once and exit (status 0 only if it succeeded)")
	// With --kubeconfig or --in-cluster services come from the API server
	// instead of the file's services:.
	kf := kubeFlags{Kube: cli.RegisterKube(fs, cli.ClientGoDefaults)}
	fs.StringVar(&kf.l4Cluster, "l4-cluster", "", "with Kubernetes: the L4Cluster whose VIPs this director serves")
	fs.StringVar(&kf.namespace, "namespace", "", "with Kubernetes and --node-name: the directors' namespace (the DaemonSet passes metadata.namespace), whose Secrets hold the BGPPeers' MD5 passwords (spec.passwordSecretRef); empty: no Secret is read and a BGPPeer with a password is left out")
	sysctlDir := fs.String("sysctl-dir", procsys.DefaultRoot, "directory holding the kernel's sysctls; in a container, where /proc/sys is read-only, the host's /proc/sys/net mounted under DIR/net (the DaemonSet uses /host/proc/sys)")
	routerID := fs.String("router-id", "", "BGP router ID (IPv4) overriding bgp.routerID, so one file serves a DaemonSet: pass the node's IP")
	drainTimeout := fs.Duration("gateway-drain-timeout", agent.DefaultDrainTimeout, "the longest a gateway drained by its Node annotation tlb.io/drain keeps its established flows before its real server is removed anyway (it goes as soon as it has no active connection)")
	nodeName := fs.String("node-name", "", "with Kubernetes: this director's Node (the DaemonSet passes spec.nodeName); its labels choose the BGP peers (nodeSelectors of bgp.peers and of BGPPeers), which also come from the BGPPeers, and the VIPPools' spec.bgp set the communities, local preference and aggregation")
	nodeLabels := fs.String("node-labels", "", "without Kubernetes: this node's labels, key=value,key=value, which choose the BGP peers (bgp.peers[].nodeSelectors)")
	metricsHost := fs.String("metrics-host", "", "serve metrics, health and status on this IP (with director.metricsAddress's port) instead of the file's host; the DaemonSet passes the node's IP (status.hostIP)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if common.Version(stdout) {
		return 0
	}
	if *routerID != "" {
		if a, err := netip.ParseAddr(*routerID); err != nil || !a.Is4() || a.IsUnspecified() {
			_, _ = fmt.Fprintf(stderr, "tlb run: --router-id: %q is not an IPv4 address\n", *routerID)
			return 2
		}
	}
	if _, err := obs.OnHost("127.0.0.1:0", *metricsHost); err != nil {
		_, _ = fmt.Fprintf(stderr, "tlb run: --metrics-host: %v\n", err)
		return 2
	}
	labels, err := parseNodeLabels(*nodeLabels)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "tlb run: --node-labels: %v\n", err)
		return 2
	}
	if *nodeName != "" && *nodeLabels != "" {
		_, _ = fmt.Fprintln(stderr, "tlb run: --node-labels and --node-name exclude each other: with --node-name the labels come from the Node")
		return 2
	}
	if *drainTimeout <= 0 {
		_, _ = fmt.Fprintf(stderr, "tlb run: --gateway-drain-timeout: %v is not positive\n", *drainTimeout)
		return 2
	}
	if *path == "" {
		_, _ = fmt.Fprintln(stderr, "tlb run: --config is required")
		return 2
	}
	log := common.Logger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *path, *once, hostFlags{routerID: *routerID, metricsHost: *metricsHost, drainTimeout: *drainTimeout,
		nodeName: *nodeName, nodeLabels: labels}, procsys.ProcSys{Root: *sysctlDir}, kf, log); err != nil {
		log.Error("tlb run failed", "err", err)
		return 1
	}
	return 0
}

// hostFlags are the node's own settings a DaemonSet passes on the command
// line, so that one file serves every node.
type hostFlags struct {
	routerID    string // replaces bgp.routerID
	metricsHost string // replaces the host of director.metricsAddress
	// drainTimeout bounds a gateway drain (Node annotation tlb.io/drain).
	drainTimeout time.Duration
	// nodeName is the director's Node in Kubernetes; nodeLabels its
	// labels without Kubernetes. Either chooses the BGP peers.
	nodeName   string
	nodeLabels map[string]string
}

// run wires the config, the kernel handle, the director, metrics and the
// watcher, and returns when ctx is done (or after one reconcile with once).
func run(ctx context.Context, path string, once bool, hf hostFlags, sysctls procsys.ProcSys, kf kubeFlags, log *slog.Logger) error {
	load := config.Load
	if kf.Enabled() {
		// Services come from the API server; the file holds the rest.
		load = config.LoadSettings
	}
	cfg, err := load(path)
	if err != nil {
		return err
	}
	cfg.Override(config.Overrides{RouterID: hf.routerID})
	metricsAddr, err := obs.OnHost(cfg.Director.MetricsAddress, hf.metricsHost)
	if err != nil {
		return fmt.Errorf("%s: director.metricsAddress: %w", path, err)
	}
	source, bw, err := sources(kf, hf, cfg, once, log)
	if err != nil {
		return err
	}
	if err := director.CheckKernel(sysctls); err != nil {
		return err
	}
	handle, err := director.OpenKernel("")
	if err != nil {
		return fmt.Errorf("open IPVS netlink sockets: %w", err)
	}
	defer handle.Close()

	srv := obs.NewServer(metricsAddr, log)
	metrics, err := director.NewMetrics(srv.Registry)
	if err != nil {
		return fmt.Errorf("register director metrics: %w", err)
	}
	rejected := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tlb_director_config_rejected_total",
		Help: "Configuration file versions rejected as invalid (the last valid one stays applied).",
	})
	srv.Registry.MustRegister(rejected)

	d, err := director.New(handle, sysctls, log, director.Options{RuntimeDir: cfg.Director.RuntimeDir, Metrics: metrics})
	if err != nil {
		return err
	}
	drain, closeReaders, err := ipvsReaders(srv, d, hf.drainTimeout)
	if err != nil {
		return err
	}
	defer closeReaders()
	routes, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("open route netlink socket: %w", err)
	}
	defer routes.Close()
	local := anyip.New(routes, log)
	// reconcile makes the VIP ranges local (so IPVS sees their packets),
	// then programs IPVS.
	reconcile := func(ctx context.Context, desired model.Desired) (director.Result, error) {
		if err := desired.Validate(); err != nil {
			// The director refuses it too, writing nothing; keep the
			// routes as they are as well.
			return d.Reconcile(ctx, desired)
		}
		if _, err := local.Reconcile(ctx, desired.VIPRanges); err != nil {
			return director.Result{}, err
		}
		return d.Reconcile(ctx, desired)
	}

	if once {
		res, err := reconcile(ctx, cfg.Desired)
		log.Info("reconciled once", "writes", res.Writes, "services", res.Services, "realServers", res.RealServers,
			"duration", res.Duration)
		return err
	}

	return serve(ctx, path, cfg, source, srv, programmer(reconcile), drain, bw, rejected, log)
}

// sources builds, with Kubernetes, the director's model source and, with
// --node-name and a bgp section, its BGP policy source; without, the node
// labels of --node-labels. A nil source means services come from the file.
func sources(kf kubeFlags, hf hostFlags, cfg *config.Config, once bool, log *slog.Logger) (desiredSource, bgpWiring, error) {
	bw := bgpWiring{nodeLabels: hf.nodeLabels}
	if !kf.Enabled() {
		if hf.nodeName != "" {
			return nil, bw, fmt.Errorf("--node-name needs Kubernetes (--kubeconfig or --in-cluster); without it pass --node-labels")
		}
		return nil, bw, nil
	}
	if once {
		return nil, bw, fmt.Errorf("--once reads services from the file; it does not combine with Kubernetes")
	}
	source, err := newKubeSource(kf, log)
	if err != nil {
		return nil, bw, err
	}
	if hf.nodeName != "" && cfg.BGP != nil {
		if bw.policy, err = newBGPPolicySource(kf, hf.nodeName, log); err != nil {
			return nil, bw, err
		}
	}
	return source, bw, nil
}

// programmer adapts the reconcile function to agent.Programmer.
type programmer func(context.Context, model.Desired) (director.Result, error)

func (p programmer) Program(ctx context.Context, d model.Desired) (director.Result, error) {
	return p(ctx, d)
}

// ipvsReaders opens the director's two read-only IPVS sockets besides
// its own (an IPVS handle is one netlink socket and must not serve two
// goroutines at once): per-VIP traffic, IPVS's own counters read at
// scrape time for the services d owns only, and the connections
// of draining gateways, read by the agent's passes. close closes both.
func ipvsReaders(srv *obs.Server, d *director.Director, drainTimeout time.Duration) (drainWiring, func(), error) {
	stats, err := ipvs.New("")
	if err != nil {
		return drainWiring{}, nil, fmt.Errorf("open IPVS netlink socket for traffic metrics: %w", err)
	}
	srv.Registry.MustRegister(director.NewTrafficCollector(stats, d))
	conns, err := ipvs.New("")
	if err != nil {
		stats.Close()
		return drainWiring{}, nil, fmt.Errorf("open IPVS netlink socket for the connections of draining gateways: %w", err)
	}
	return drainWiring{counter: connections.New(conns, d), timeout: drainTimeout}, func() {
		conns.Close()
		stats.Close()
	}, nil
}
