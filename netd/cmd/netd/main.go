// Command netd runs on each TLB gateway node. It keeps the IPIP tunnel up,
// binds the node's VIPs on it, sets the sysctls direct server return needs
// clamps the MSS advertised from the VIPs and redirects mapped external VIP
// ports to local listener ports, reconciling on every change of its
// configuration file.
//
//	netd run --config /etc/tlb/netd.yaml
//
// main only wires flags, handles, the file watcher and signals; the logic
// lives in netd, netd/agent and netd/kernel.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/internal/buildinfo"
	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/internal/dirwatch"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/internal/procsys"
	"github.com/tlbproject/tlb/netd"
	"github.com/tlbproject/tlb/netd/agent"
	"github.com/tlbproject/tlb/netd/config"
	"github.com/tlbproject/tlb/netd/kernel"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "version") {
		fmt.Println(buildinfo.Read("netd"))
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "run" {
		fmt.Fprintln(os.Stderr, "usage: netd run --config FILE [--resync 30s] [--once]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("netd run", flag.ExitOnError)
	common := cli.Register(fs, "netd", cli.FormatJSON)
	fs.BoolFunc("debug", "log at debug level (the same as --log-level=debug)", func(string) error {
		common.SetLevel(slog.LevelDebug)
		return nil
	})
	var o options
	fs.StringVar(&o.path, "config", "/etc/tlb/netd.yaml", "configuration file (watched; changes are applied without restart)")
	fs.DurationVar(&o.resync, "resync", 30*time.Second, "interval of reconciles that repair drift")
	fs.BoolVar(&o.once, "once", false, "reconcile once and exit")
	sysctlDir := fs.String("sysctl-dir", procsys.DefaultRoot, "directory holding the kernel's sysctls; in a container, where /proc/sys is read-only, the host's /proc/sys/net mounted under DIR/net (the DaemonSet uses /host/proc/sys)")
	fs.StringVar(&o.metricsHost, "metrics-host", "", "serve metrics and health on this IP (with netd.metricsAddress's port) instead of the file's host; the DaemonSet passes the node's IP (status.hostIP)")
	// With --kubeconfig or --in-cluster the node's VIPs come from the API
	// server instead of the file's vips:.
	kf := kubeFlags{Kube: cli.RegisterKube(fs, cli.ClientGoDefaults)}
	fs.StringVar(&kf.nodeName, "node", os.Getenv("NODE_NAME"), "with Kubernetes: this node's name")
	_ = fs.Parse(os.Args[2:])
	if common.Version(os.Stdout) {
		return
	}
	o.sysctls = procsys.ProcSys{Root: *sysctlDir}
	log := common.Logger(os.Stderr).With("component", "netd")
	if err := run(log, o, kf); err != nil {
		log.Error("netd stopped", "err", err)
		os.Exit(1)
	}
}

// options are netd run's own flags.
type options struct {
	path        string
	resync      time.Duration
	once        bool
	metricsHost string
	sysctls     procsys.ProcSys
}

func run(log *slog.Logger, o options, kf kubeFlags) error {
	if o.resync <= 0 {
		return fmt.Errorf("--resync must be positive, got %s", o.resync)
	}
	if _, err := obs.OnHost("127.0.0.1:0", o.metricsHost); err != nil {
		return fmt.Errorf("--metrics-host: %w", err)
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("open netlink handle: %w", err)
	}
	defer h.Close()
	gw := netd.NewGateway(kernel.NewLinks(h), o.sysctls, kernel.NewClamp(netns.None()), log)

	// The metrics address comes from the file, so read it before serving;
	// an invalid file stops netd here, before anything is changed.
	cfg, err := config.Load(o.path)
	if err != nil {
		return err
	}
	metricsAddr, err := obs.OnHost(cfg.MetricsAddress, o.metricsHost)
	if err != nil {
		return fmt.Errorf("netd config %s: netd.metricsAddress: %w", o.path, err)
	}
	srv := obs.NewServer(metricsAddr, log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	a, changed, err := newAgent(ctx, o, kf, cfg, gw, srv, log)
	if err != nil {
		return err
	}
	if err := a.Load(); err != nil {
		return err
	}
	if o.once {
		res, err := a.Reconcile()
		if err != nil {
			return err
		}
		log.Info("gateway reconciled", "writes", res.Writes, "plan", res.Plan.String())
		return nil
	}
	addr, err := srv.Start(nil)
	if err != nil {
		return err
	}
	log.Info("serving metrics and health", "addr", addr)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()

	if res, err := a.Reconcile(); err != nil {
		log.Error("initial reconcile failed; will retry", "err", err)
		srv.SetReady(false, err.Error())
	} else {
		log.Info("gateway reconciled", "writes", res.Writes, "plan", res.Plan.String())
		srv.SetReady(true, "")
	}
	a.Run(ctx, changed, o.resync, srv.SetReady)
	log.Info("netd stopping; bound VIPs stay in place")
	return nil
}

// newAgent builds the agent with its source of VIPs, the API server or
// the file, and the channel of its changes: the source's models, or the
// file's directory watched (before the first read, so no change falls
// between the two; none with --once).
func newAgent(ctx context.Context, o options, kf kubeFlags, cfg config.Config, gw *netd.Gateway, srv *obs.Server, log *slog.Logger) (*agent.Agent, <-chan struct{}, error) {
	if kf.Enabled() {
		if o.once {
			return nil, nil, fmt.Errorf("--once reads VIPs from the file; it does not combine with Kubernetes")
		}
		if len(cfg.Gateway.VIPs) > 0 || len(cfg.Gateway.Ports) > 0 {
			return nil, nil, fmt.Errorf("netd config %s: vips, ports: not allowed when VIPs come from the Kubernetes API server; remove them (netd.listenerPorts sets the L7 port map)", o.path)
		}
		kg, err := startKube(ctx, kf, cfg, log)
		if err != nil {
			return nil, nil, err
		}
		return agent.NewWithLoader("kubernetes node "+kf.nodeName, kg.load, gw, agent.NewMetrics(srv.Registry), log, time.Now), kg.changed, nil
	}
	if len(cfg.ListenerPorts) > 0 {
		return nil, nil, fmt.Errorf("netd config %s: netd.listenerPorts: used only when VIPs come from the Kubernetes API server; in a file, list ports: per VIP", o.path)
	}
	a := agent.New(o.path, gw, agent.NewMetrics(srv.Registry), log, time.Now)
	if o.once {
		return a, nil, nil
	}
	dir := filepath.Dir(o.path)
	n, err := dirwatch.Watch(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	return a, agent.WatchFile(ctx, n, 200*time.Millisecond, o.path, log), nil
}
