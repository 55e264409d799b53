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
	cfgPath := fs.String("config", "/etc/tlb/netd.yaml", "configuration file (watched; changes are applied without restart)")
	resync := fs.Duration("resync", 30*time.Second, "interval of reconciles that repair drift")
	once := fs.Bool("once", false, "reconcile once and exit")
	debug := fs.Bool("debug", false, "log at debug level")
	sysctlDir := fs.String("sysctl-dir", procsys.DefaultRoot, "directory holding the kernel's sysctls; in a container, where /proc/sys is read-only, the host's /proc/sys/net mounted under DIR/net (the DaemonSet uses /host/proc/sys)")
	metricsHost := fs.String("metrics-host", "", "serve metrics and health on this IP (with netd.metricsAddress's port) instead of the file's host; the DaemonSet passes the node's IP (status.hostIP)")
	var kf kubeFlags
	fs.StringVar(&kf.kubeconfig, "kubeconfig", "", "take the node's VIPs from the Kubernetes API server of this kubeconfig instead of the file's vips:")
	fs.BoolVar(&kf.inCluster, "in-cluster", false, "take the node's VIPs from the API server of the pod's service account")
	fs.StringVar(&kf.nodeName, "node", os.Getenv("NODE_NAME"), "with Kubernetes: this node's name")
	_ = fs.Parse(os.Args[2:])

	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("component", "netd")
	if err := run(log, *cfgPath, *resync, *once, *metricsHost, procsys.ProcSys{Root: *sysctlDir}, kf); err != nil {
		log.Error("netd stopped", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, path string, resync time.Duration, once bool, metricsHost string, sysctls procsys.ProcSys, kf kubeFlags) error {
	if resync <= 0 {
		return fmt.Errorf("--resync must be positive, got %s", resync)
	}
	if _, err := obs.OnHost("127.0.0.1:0", metricsHost); err != nil {
		return fmt.Errorf("--metrics-host: %w", err)
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("open netlink handle: %w", err)
	}
	defer h.Close()
	gw := netd.NewGateway(kernel.NewLinks(h), sysctls, kernel.NewClamp(netns.None()), log)

	// The metrics address comes from the file, so read it before serving;
	// an invalid file stops netd here, before anything is changed.
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	metricsAddr, err := obs.OnHost(cfg.MetricsAddress, metricsHost)
	if err != nil {
		return fmt.Errorf("netd config %s: netd.metricsAddress: %w", path, err)
	}
	srv := obs.NewServer(metricsAddr, log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var a *agent.Agent
	var kubeChanged <-chan struct{}
	if kf.enabled() {
		if once {
			return fmt.Errorf("--once reads VIPs from the file; it does not combine with Kubernetes")
		}
		if len(cfg.Gateway.VIPs) > 0 || len(cfg.Gateway.Ports) > 0 {
			return fmt.Errorf("netd config %s: vips, ports: not allowed when VIPs come from the Kubernetes API server; remove them (netd.listenerPorts sets the L7 port map)", path)
		}
		kg, err := startKube(ctx, kf, cfg, log)
		if err != nil {
			return err
		}
		a = agent.NewWithLoader("kubernetes node "+kf.nodeName, kg.load, gw, agent.NewMetrics(srv.Registry), log, time.Now)
		kubeChanged = kg.changed
	} else {
		if len(cfg.ListenerPorts) > 0 {
			return fmt.Errorf("netd config %s: netd.listenerPorts: used only when VIPs come from the Kubernetes API server; in a file, list ports: per VIP", path)
		}
		a = agent.New(path, gw, agent.NewMetrics(srv.Registry), log, time.Now)
	}
	// Watch before the first read, so no change falls between the two.
	changed := kubeChanged
	if changed == nil && !once {
		dir := filepath.Dir(path)
		n, err := dirwatch.Watch(dir)
		if err != nil {
			return fmt.Errorf("watch %s: %w", dir, err)
		}
		changed = agent.WatchFile(ctx, n, 200*time.Millisecond, path, log)
	}
	if err := a.Load(); err != nil {
		return err
	}
	if once {
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
	a.Run(ctx, changed, resync, srv.SetReady)
	log.Info("netd stopping; bound VIPs stay in place")
	return nil
}
