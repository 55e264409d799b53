package authz

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// listenerPort is the port of every test listener (on its own VIP).
const listenerPort = 22080

// redisPassword is the Redis AUTH password of the tests' Redis, given to
// l7 in a file as deploy/envoy gives it (--authz-redis-password-file).
const redisPassword = "t3st-Redis_pass"

// gatewayFile is the gateway of every site: one HTTP listener on the
// site's VIP.
const gatewayFile = `kind: gateway/gateway/v1
name: public
group: edge
listeners:
  - {name: web, vip: $VIP, port: $PORT, protocol: HTTP}
`

// site is one gateway (l7 serve with its authorization service, and
// Envoy) serving a DSL directory, with a backend that answers what it
// received and a Redis with a password holding the sessions.
type site struct {
	// vip is the listener's address, VIP:port.
	vip     string
	gw      *envoyproc.Gateway
	redis   *sessionRedis
	backend *backend
	dir     string
}

// sessionRedis is a private Redis that requires redisPassword, and a
// session store that uses it.
type sessionRedis struct {
	proc     *redisproc.Redis
	addr     string
	file     string
	sessions *sessionstore.Redis
}

// startRedis starts a private redis-server that requires redisPassword.
func startRedis(t *testing.T) *sessionRedis {
	t.Helper()
	rp := redisproc.StartForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin := redis.NewClient(&redis.Options{Addr: rp.Addr})
	if err := admin.ConfigSet(ctx, "requirepass", redisPassword).Err(); err != nil {
		t.Fatalf("redis CONFIG SET requirepass: %v", err)
	}
	_ = admin.Close()
	file := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(file, []byte(redisPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rc := sessionstore.NewClient(rp.Addr, redisPassword)
	t.Cleanup(func() { _ = rc.Close() })
	return &sessionRedis{proc: rp, addr: rp.Addr, file: file, sessions: sessionstore.NewRedis(rc, "")}
}

// siteOptions say what a site serves.
type siteOptions struct {
	// hostIP is the gateway's node address (stats and l7's metrics
	// listeners); the VIP is hostIP's network with last byte +100.
	hostIP string
	// files are the DSL files besides the gateway's; $BACKEND stands for
	// the backend's host:port, $VIP and $PORT for the listener's.
	files map[string]string
	// serve are more l7 serve arguments.
	serve []string
	// vars are more replacements in files.
	vars map[string]string
	// redis and backend, when set, are shared with other sites; by
	// default the site starts its own.
	redis   *sessionRedis
	backend *backend
}

// startSite starts the backend, Redis, l7 (with --authz-listen on the
// unix socket of the manifest's bootstrap) and Envoy, and waits until
// Envoy serves the listener.
func startSite(t *testing.T, o siteOptions) *site {
	t.Helper()
	ip := net.ParseIP(o.hostIP).To4()
	if ip == nil {
		t.Fatalf("bad hostIP %q", o.hostIP)
	}
	vipIP := net.IPv4(ip[0], ip[1], ip[2], ip[3]+100).String()
	s := &site{vip: net.JoinHostPort(vipIP, strconv.Itoa(listenerPort)), redis: o.redis, backend: o.backend}
	if s.redis == nil {
		s.redis = startRedis(t)
	}
	if s.backend == nil {
		s.backend = startBackend(t, net.IPv4(ip[0], ip[1], ip[2], ip[3]+150).String(), s.redis.sessions)
	}
	s.dir = writeDSL(t, vipIP, s.backend.addr, o.files, o.vars)
	checkRenders(t, s.dir, o.serve)
	serve := append([]string{"--config=" + s.dir, "--authz-redis=" + s.redis.addr,
		"--authz-redis-password-file=" + s.redis.file}, o.serve...)
	s.gw = envoyproc.StartT(t, envoyproc.Options{Group: "edge", Authz: true, HostIP: o.hostIP, Serve: serve})
	s.waitListener(t)
	return s
}

// writeDSL writes the gateway file (its listener on vip) and files into a
// new directory, with $BACKEND, $VIP, $PORT and vars replaced.
func writeDSL(t *testing.T, vip, backend string, files, vars map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	repl := []string{"$BACKEND", backend, "$VIP", vip, "$PORT", strconv.Itoa(listenerPort)}
	for k, v := range vars {
		repl = append(repl, k, v)
	}
	r := strings.NewReplacer(repl...)
	all := map[string]string{"gateway.yaml": gatewayFile}
	for n, c := range files {
		all[n] = c
	}
	for n, c := range all {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(r.Replace(c)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkRenders fails the test when l7 rejects a file of dir: a rejected
// file is left out and the gateway would serve without it.
func checkRenders(t *testing.T, dir string, serve []string) {
	t.Helper()
	l7, err := envoyproc.L7Binary()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"render", "--config=" + dir, "--group=edge"}
	for _, a := range serve {
		if strings.HasPrefix(a, "--ratelimit-address") {
			args = append(args, a)
		}
	}
	var problems strings.Builder
	cmd := exec.Command(l7, args...)
	cmd.Stderr = &problems
	if err := cmd.Run(); err != nil {
		t.Fatalf("l7 %s: %v\n%s", strings.Join(args, " "), err, problems.String())
	}
}

// waitListener waits until a connection to the VIP is accepted: Envoy is
// ready once it has its first listeners, but binds them as it adds them.
func (s *site) waitListener(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.gw.Wait(ctx, "listener "+s.vip, func(context.Context) (bool, string) {
		c, err := net.DialTimeout("tcp", s.vip, time.Second)
		if err != nil {
			return false, err.Error()
		}
		_ = c.Close()
		return true, ""
	})
	if err != nil {
		t.Fatal(err)
	}
}

// metric returns the sum of every series of an l7 counter on its obs
// listener (0 when it has none yet).
func (s *site) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.gw.Metrics + "/metrics")
	if err != nil {
		t.Fatalf("l7 /metrics: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("l7 /metrics line %q: %v", line, err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sum
}

// authzChecks is how many checks l7's authorization service answered.
func (s *site) authzChecks(t *testing.T) float64 {
	return s.metric(t, "tlb_l7_authz_checks_total")
}

// envoyStat returns one of Envoy's counters.
func (s *site) envoyStat(t *testing.T, name string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := s.gw.Stat(ctx, name)
	if err != nil {
		t.Fatalf("envoy stat %s: %v", name, err)
	}
	return v
}

func (s *site) String() string { return fmt.Sprintf("gateway %s", s.vip) }
