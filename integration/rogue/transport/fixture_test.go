package transport

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/internal/poll"
)

// The addresses of this suite (127.0.25.0/24, ports 25000-25999).
const (
	alphaVIP    = "127.0.25.110:25443" // gateway ga of group alpha
	bravoVIP    = "127.0.25.120:25443" // gateway ga of group bravo (rejected)
	bravoGBVIP  = "127.0.25.121:25443" // gateway gb of group bravo
	backendIP   = "127.0.25.150"
	alphaHost   = "alpha.example.com"
	gatewayNode = "127.0.25.2" // the gateway node's address (stats, l7 obs)
	// alpha is the group of the gateway under attack: the manifest's
	// group, since its bootstrap (read from deploy/) names it.
	alpha = "edge"
)

// groups is a DSL directory shared by groups alpha (edge) and bravo, as an
// operator's ConfigMap may be: bravo's gateway "ga" takes the name of
// alpha's (so the same certificate name, ga.acert) and is rejected for
// another reason; bravo's gateway gb is good. Every key is in certDir.
type groups struct {
	dir, certDir string
	// keys and chains by file name: alpha, bravo, bravo2.
	keys, chains map[string][]byte
	backend      string
}

// writeGroups writes the directory, readable by uid (0: root only).
func writeGroups(t *testing.T, uid int) groups {
	t.Helper()
	root, err := os.MkdirTemp("", "dsl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	g := groups{dir: filepath.Join(root, "config"), certDir: filepath.Join(root, "certs"), keys: map[string][]byte{}, chains: map[string][]byte{},
		backend: startBackend(t)}
	for _, d := range []string{g.dir, g.certDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, host := range map[string]string{"alpha": alphaHost, "bravo": "bravo.example.com", "bravo2": "gb.bravo.example.com"} {
		g.chains[name], g.keys[name] = tlstest.SelfSigned(t, host)
		write(t, g.certDir, name+".crt", string(g.chains[name]))
		write(t, g.certDir, name+".key", string(g.keys[name]))
	}
	cert := func(name, file, host string) string {
		return fmt.Sprintf("[{name: %s, sni: [%s], certFile: %s/%s.crt, keyFile: %s/%s.key}]", name, host, g.certDir, file, g.certDir, file)
	}
	vip := func(addr string) (string, string) { h, p, _ := net.SplitHostPort(addr); return h, p }
	bh, bp := vip(bravoVIP)
	write(t, g.dir, "a-bravo.yaml", fmt.Sprintf(`kind: gateway/gateway/v1
name: ga
group: bravo
listeners:
  - {name: secure, vip: %s, port: %s, protocol: HTTPS, certificates: %s}
  - {name: again, vip: %s, port: %s, protocol: HTTP}
`, bh, bp, cert("acert", "bravo", "bravo.example.com"), bh, bp))
	ah, apt := vip(alphaVIP)
	write(t, g.dir, "b-alpha.yaml", fmt.Sprintf(`kind: gateway/gateway/v1
name: ga
group: %s
listeners:
  - {name: secure, vip: %s, port: %s, protocol: HTTPS, certificates: %s}
`, alpha, ah, apt, cert("acert", "alpha", alphaHost)))
	gh, gp := vip(bravoGBVIP)
	write(t, g.dir, "c-bravo-gb.yaml", fmt.Sprintf(`kind: gateway/gateway/v1
name: gb
group: bravo
listeners:
  - {name: secure, vip: %s, port: %s, protocol: HTTPS, certificates: %s}
`, gh, gp, cert("bcert", "bravo2", "gb.bravo.example.com")))
	write(t, g.dir, "d-alpha-app.yaml", fmt.Sprintf(`kind: gateway/service/v1
name: app
group: %s
hosts: [%s]
listeners: [ga/secure]
upstreams: [{name: main, endpoints: [%q]}]
routes:
  - {name: private, prefix: /private, target: main, interceptors: [{type: sessionInterceptor}]}
  - {name: all, prefix: /, target: main}
`, alpha, alphaHost, g.backend))
	if uid != 0 {
		err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Chown(p, uid, uid)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startBackend answers every request with 200 "backend".
func startBackend(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(backendIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("backend")) }),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// startAlphaGateway runs group alpha's gateway as deploy/envoy does: l7
// (with its authorization service, sessions in the manifest's Redis as
// tlb-l7) and Envoy, as the manifest's user, on gatewayNode; it returns
// once Envoy is ready and serves alpha's listener.
func startAlphaGateway(t *testing.T, g groups) *envoyproc.Gateway {
	t.Helper()
	redis := envoyproc.StartRedisT(t, "127.0.25.20")
	pw := filepath.Join(filepath.Dir(g.dir), "redis-password")
	write(t, filepath.Dir(pw), filepath.Base(pw), redis.Passwords["tlb-l7"]+"\n")
	if err := os.Chown(pw, 101, 101); err != nil {
		t.Fatal(err)
	}
	gw := envoyproc.StartT(t, envoyproc.Options{Group: alpha, HostIP: gatewayNode, Authz: true, AsManifestUser: true,
		Serve: []string{"--config=" + g.dir, "--cert-dir=" + g.certDir, "--authz-redis=" + redis.Addr,
			"--authz-redis-user=tlb-l7", "--authz-redis-password-file=" + pw}})
	poll.Until(t, time.Minute, "Envoy serves alpha's listener "+alphaVIP, func() bool {
		c, err := net.DialTimeout("tcp", alphaVIP, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	return gw
}

// l7Process is an l7 serve run directly (not beside an Envoy).
type l7Process struct {
	cmd *exec.Cmd
	log *os.File
}

// startL7 runs l7 serve with args until the test ends; ready, when set,
// is polled until it holds.
func startL7(t *testing.T, args []string, ready func() bool) *l7Process {
	t.Helper()
	bin, err := envoyproc.L7Binary()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.CreateTemp("", "l7-*.log")
	if err != nil {
		t.Fatal(err)
	}
	p := &l7Process{cmd: exec.Command(bin, append([]string{"serve"}, args...)...), log: log}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("--- l7 %s log:\n%s", strings.Join(args, " "), b)
		}
		_ = log.Close()
		_ = os.Remove(log.Name())
	})
	if ready != nil {
		poll.Until(t, time.Minute, "l7 "+strings.Join(args, " ")+" is ready", func() bool {
			select {
			case <-exited:
				return true // fails below
			default:
			}
			return ready()
		})
		select {
		case <-exited:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("l7 exited: %s", b)
		default:
		}
	}
	return p
}

// readyz reports whether the obs listener at addr answers /readyz 200.
func readyz(addr string) func() bool {
	return func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}
