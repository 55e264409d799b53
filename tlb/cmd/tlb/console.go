package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/internal/console"
	"github.com/tlbproject/tlb/tlb/config"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/status"
)

// endpointsFlag collects repeated NAME=URL flags of one role.
type endpointsFlag struct {
	role console.Role
	eps  *[]console.Endpoint
}

func (f endpointsFlag) String() string { return "" }

func (f endpointsFlag) Set(v string) error {
	name, raw, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want NAME=URL, e.g. node-1=http://10.0.0.1:9100", v)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: %q is not an http(s) URL", v, raw)
	}
	*f.eps = append(*f.eps, console.Endpoint{Role: f.role, Name: name, URL: raw})
	return nil
}

func consoleCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tlb console", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8480", "address to serve the page on; loopback by default (reach it with kubectl port-forward)")
	common := cli.Register(fs, "tlb", cli.FormatText)
	kf := cli.RegisterKube(fs, cli.ClientGoDefaults) // show what the API server holds
	leaseNS := fs.String("lease-namespace", "tlb-system", "namespace whose Leases (leader election) are shown")
	podNS := fs.String("pod-namespace", "tlb-system", "with Kubernetes: find the director and netd Pods of this namespace by label and read each one's obs listener at its node's IP; empty: only the --director/--netd/--l7 endpoints")
	timeout := fs.Duration("timeout", console.DefaultTimeout, "how long a page waits for any one source (each has its own budget, all at once); a source that takes longer is shown slow, with its last good data and their age, while its read goes on")
	giveUp := fs.Duration("give-up", 0, "how long one read of a source may run before the source is shown unreachable (default 6 x --timeout)")
	slowAfter := fs.Duration("slow-after", console.DefaultSlowAfter, "an answer that takes longer is shown slow, with its time")
	localIPVS := fs.Bool("ipvs", false, "also read this host's IPVS (as `tlb status` does; on a director, as root): real servers with weights and connections")
	runtimeDir := fs.String("runtime-dir", config.DefaultRuntimeDir, "with --ipvs: directory of the director's ownership record")
	l7Token := fs.String("l7-token-file", "", "bearer token sent with l7's /routes: with the API server a ServiceAccount token of audience tlb-l7 whose user RBAC lets get /tlb.io/l7/routes (deploy/console projects one), in file mode the file given to l7 serve --routes-token-file; empty: no routes")
	var eps []console.Endpoint
	fs.Var(endpointsFlag{console.RoleDirector, &eps}, "director", "NAME=URL of a director's obs listener (metricsAddress), repeatable")
	fs.Var(endpointsFlag{console.RoleNetd, &eps}, "netd", "NAME=URL of a netd's obs listener, repeatable")
	fs.Var(endpointsFlag{console.RoleL7, &eps}, "l7", "NAME=URL of an l7 server's metrics listener, repeatable")
	fs.Var(endpointsFlag{console.RoleEnvoy, &eps}, "envoy", "NAME=URL of an Envoy's stats listener (l7 bootstrap --stats-address), repeatable")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		_, _ = fmt.Fprintf(stderr, "tlb console: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if common.Version(stdout) {
		return 0
	}
	log := common.Logger(stderr)
	col := &console.Collector{Components: console.HTTPComponents{Endpoints: eps, Client: &http.Client{}, L7TokenFile: *l7Token},
		Timeout: *timeout, GiveUp: *giveUp, SlowAfter: *slowAfter, Now: time.Now}
	if *localIPVS {
		col.IPVS = kernelIPVS{runtimeDir: *runtimeDir}
	}
	if kf.Enabled() {
		c, err := kf.Clients("tlb-console")
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "tlb console: %v\n", err)
			return 1
		}
		col.API = console.KubeSource{Kube: c.Kube, Dynamic: c.Dynamic, LeaseNamespace: *leaseNS, OwnNamespace: cmp.Or(*podNS, *leaseNS), Now: time.Now}
		if *podNS != "" {
			col.Components = console.PodDiscovery{Kube: c.Kube, Namespace: *podNS, Static: eps, Client: &http.Client{}, L7TokenFile: *l7Token}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "tlb console: listen for the console on %s: %v\n", *listen, err)
		return 1
	}
	if err := serveConsole(ctx, ln, col, log); err != nil {
		log.Error("tlb console failed", "err", err)
		return 1
	}
	return 0
}

// kernelIPVS reads this host's IPVS services as `tlb status` does, with a
// netlink handle opened per page.
type kernelIPVS struct{ runtimeDir string }

func (k kernelIPVS) ReadIPVS(context.Context) ([]status.Service, error) {
	rec, err := director.LoadRecord(k.runtimeDir)
	if err != nil {
		return nil, err
	}
	// Without the ip_vs module the netlink dump lists nothing: say so.
	if err := director.CheckKernel(director.ProcSys{}); err != nil {
		return nil, err
	}
	h, err := ipvs.New("")
	if err != nil {
		return nil, fmt.Errorf("open IPVS netlink socket: %w", err)
	}
	defer h.Close()
	return status.Read(h, rec.Owns)
}

// serveConsole serves the page on ln until ctx ends.
func serveConsole(ctx context.Context, ln net.Listener, col *console.Collector, log *slog.Logger) error {
	h, err := console.NewHandler(col, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Info("serving the console", "addr", ln.Addr().String(), "kubernetes", col.API != nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("stop the console: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
