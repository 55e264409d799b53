package envoyproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options say which gateway to run and where.
type Options struct {
	// Group is the gateway group (l7 serve --group). Required.
	Group string
	// Dir holds the gateway's sockets (Dir/run), bootstrap (Dir/etc) and
	// logs. Keep it short: unix socket paths have 107 bytes at most.
	// Required; made if missing.
	Dir string
	// Serve are l7 serve's arguments besides --group, --xds-addr,
	// --metrics-addr and --authz-listen, e.g. --config DIR.
	Serve []string
	// Authz also serves l7's authorization service on Dir/run/authz.sock,
	// where the manifest's bootstrap points Envoy's tlb-l7-authz cluster.
	Authz bool
	// HostIP stands for the node's address ($(HOST_IP)): the stats
	// listener (:9902) and l7's obs listener (:9480) bind it. Default
	// 127.0.0.1; give each gateway of one network namespace its own.
	HostIP string
	// Node stands for $(NODE_NAME). Default "gateway".
	Node string
	// Manifest is the gateway DaemonSet; default deploy/envoy/gateway.yaml
	// of this module.
	Manifest string
	// AsManifestUser runs l7 and Envoy as the manifest's user and group,
	// Envoy with the capabilities the manifest adds and nothing else (as
	// root only).
	AsManifestUser bool
	// Command makes a command; default exec.Command. A lab node's Cmd
	// runs it inside the node.
	Command func(name string, args ...string) *exec.Cmd
	// Log, when set, also receives both processes' output.
	Log io.Writer
	// ExtraEnvoyArgs are appended to the manifest's Envoy command (e.g. a
	// higher --concurrency for a benchmark).
	ExtraEnvoyArgs []string
}

// Gateway is a running l7 serve and Envoy pair.
type Gateway struct {
	opts        Options
	spec        Spec
	rw          rewriter
	l7          string
	L7Cmd       *exec.Cmd
	EnvoyCmd    *exec.Cmd
	AdminSocket string
	XDSSocket   string
	AuthzSocket string
	// Stats is the read-only stats listener's address (HOST_IP:9902).
	StatsAddr string
	// Metrics is l7's obs listener (HOST_IP:9480).
	Metrics string
	logs    []*os.File
	exited  map[*exec.Cmd]chan error
}

// Start writes the bootstrap and starts l7 serve, then Envoy. It does not
// wait for Envoy to take config: see WaitReady.
func Start(o Options) (*Gateway, error) {
	if o.Group == "" || o.Dir == "" {
		return nil, errors.New("envoyproc: Group and Dir are required")
	}
	if o.HostIP == "" {
		o.HostIP = "127.0.0.1"
	}
	if o.Node == "" {
		o.Node = "gateway"
	}
	if o.Command == nil {
		o.Command = exec.Command
	}
	if o.Manifest == "" {
		root, err := ModuleRoot()
		if err != nil {
			return nil, err
		}
		o.Manifest = filepath.Join(root, "deploy", "envoy", "gateway.yaml")
	}
	spec, err := ReadSpec(o.Manifest)
	if err != nil {
		return nil, err
	}
	envoy, err := Binary()
	if err != nil {
		return nil, err
	}
	l7, err := L7Binary()
	if err != nil {
		return nil, err
	}
	if o.AsManifestUser {
		if envoy, err = readableCopy(envoy); err != nil {
			return nil, err
		}
		if l7, err = readableCopy(l7); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{o.Dir, filepath.Join(o.Dir, "run"), filepath.Join(o.Dir, "etc")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, err
		}
		if o.AsManifestUser {
			if err := os.Chown(d, int(spec.UID), int(spec.GID)); err != nil {
				return nil, err
			}
		}
	}
	g := &Gateway{opts: o, spec: spec, l7: l7, exited: map[*exec.Cmd]chan error{},
		rw:          rewriter{dir: o.Dir, l7: l7, envoy: envoy, hostIP: o.HostIP, node: o.Node, group: o.Group},
		AdminSocket: filepath.Join(o.Dir, "run", "envoy-admin.sock"),
		XDSSocket:   filepath.Join(o.Dir, "run", "xds.sock"),
		AuthzSocket: filepath.Join(o.Dir, "run", "authz.sock"),
		StatsAddr:   net.JoinHostPort(o.HostIP, "9902"),
		Metrics:     net.JoinHostPort(o.HostIP, "9480"),
	}
	boot := g.rw.args(spec.Bootstrap)
	if out, err := g.command(boot, false).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("envoyproc: %s: %w\n%s", strings.Join(boot, " "), err, out)
	}
	serve := append([]string{l7, "serve", "--group=" + o.Group, "--xds-addr=unix://" + g.XDSSocket, "--metrics-addr=" + g.Metrics}, o.Serve...)
	if o.Authz {
		serve = append(serve, "--authz-listen=unix://"+g.AuthzSocket)
	}
	if g.L7Cmd, err = g.start("l7", serve, false); err != nil {
		g.Stop()
		return nil, err
	}
	if g.EnvoyCmd, err = g.start("envoy", append(g.rw.args(spec.Envoy), o.ExtraEnvoyArgs...), true); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}

// command makes the command for args, as the manifest's user when asked;
// envoy gets the manifest's added capabilities as its only ones.
func (g *Gateway) command(args []string, envoy bool) *exec.Cmd {
	if !g.opts.AsManifestUser {
		return g.opts.Command(args[0], args[1:]...)
	}
	caps := "-all"
	if envoy {
		for _, c := range g.spec.EnvoyCaps {
			caps += ",+" + strings.ToLower(c)
		}
	}
	pre := []string{"--reuid=" + strconv.FormatInt(g.spec.UID, 10), "--regid=" + strconv.FormatInt(g.spec.GID, 10),
		"--clear-groups", "--inh-caps=" + caps, "--ambient-caps=" + caps, "--bounding-set=" + caps, "--no-new-privs", "--"}
	return g.opts.Command("setpriv", append(pre, args...)...)
}

func (g *Gateway) start(name string, args []string, envoy bool) (*exec.Cmd, error) {
	f, err := os.Create(filepath.Join(g.opts.Dir, name+".log"))
	if err != nil {
		return nil, err
	}
	g.logs = append(g.logs, f)
	cmd := g.command(args, envoy)
	var out io.Writer = f
	if g.opts.Log != nil {
		out = io.MultiWriter(f, g.opts.Log)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("envoyproc: start %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	g.exited[cmd] = done
	return cmd, nil
}

// Exited reports whether a process of the gateway has ended, and how.
func (g *Gateway) Exited(cmd *exec.Cmd) (bool, error) {
	select {
	case err := <-g.exited[cmd]:
		g.exited[cmd] <- err
		return true, err
	default:
		return false, nil
	}
}

// Drain runs the manifest's preStop hook (l7 drain): Envoy fails its
// readiness (/ready on the stats listener answers 503), drains its
// listeners and returns when no downstream connection is left or at the
// hook's deadline.
func (g *Gateway) Drain(ctx context.Context) error {
	args := g.rw.args(g.spec.PreStop)
	cmd := g.command(args, false)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("envoyproc: %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return ctx.Err()
}

// Stop sends SIGTERM to Envoy and l7 (as the kubelet does after preStop),
// waits for them, and kills what is left after 15 s.
func (g *Gateway) Stop() {
	for _, c := range []*exec.Cmd{g.EnvoyCmd, g.L7Cmd} {
		if c == nil || c.Process == nil {
			continue
		}
		_ = c.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-g.exited[c]:
			g.exited[c] <- err
		case <-time.After(15 * time.Second):
			_ = c.Process.Kill()
		}
	}
	for _, f := range g.logs {
		_ = f.Close()
	}
}

// Kill ends Envoy at once with SIGKILL (a crash).
func (g *Gateway) Kill() {
	if g.EnvoyCmd != nil && g.EnvoyCmd.Process != nil {
		_ = g.EnvoyCmd.Process.Kill()
	}
}

// LogTail returns the last n bytes of a process's log ("l7" or "envoy").
func (g *Gateway) LogTail(name string, n int64) string {
	b, err := os.ReadFile(filepath.Join(g.opts.Dir, name+".log"))
	if err != nil {
		return err.Error()
	}
	if int64(len(b)) > n {
		b = b[int64(len(b))-n:]
	}
	return string(b)
}

// admin returns an HTTP client of Envoy's admin API over its unix socket.
func (g *Gateway) admin() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", g.AdminSocket)
		}}}
}
