//go:build k8s

package tenant

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// group is the gateway group every site serves.
const group = "edge"

// Ports of this suite (26000-26999): the operator's listener, the Gateway
// API listener, the first tenant Service port, the declared interceptor
// and the tenant's collector.
const (
	operatorPort  = 26080
	gatewayPort   = 26090
	servicePort   = 26081
	auditPort     = 26160
	collectorPort = 26170
)

// appHost is the operator's application host.
const appHost = "app.example.com"

// The users of the operator's htpasswd files: bcrypt at cost 5 (htpasswd
// -B's default) for /ops, cost 8 for /heavy (the flood).
const (
	opsUser, opsPassword = "ops", "s3cret-ops"
	devUser, devPassword = "dev", "s3cret-dev"
)

// operatorFiles are the operator's DSL files: its gateway, the
// declaration of what tenants may name ($TEAM_A only), and its own
// application with a session route, basic auth routes and routes that
// check nothing.
var operatorFiles = map[string]string{
	"gateway.yaml": `kind: gateway/gateway/v1
name: edge
group: edge
listeners:
  - {name: web, vip: $OPVIP, port: $OPPORT, protocol: HTTP}
`,
	"interceptors.yaml": `kind: gateway/interceptors/v1
name: operator
group: edge
external:
  - {name: audit, url: "$AUDIT/check", namespaces: [$TEAM_A]}
basicAuth:
  - {name: ops, usersFile: "$OPS_USERS", namespaces: [$TEAM_A]}
`,
	"app.yaml": `kind: gateway/service/v1
name: app
group: edge
hosts: [app.example.com]
listeners: [edge/web]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
routes:
  - {name: login, prefix: /login, target: main}
  - name: account
    prefix: /account
    target: main
    interceptors:
      - {type: sessionInterceptor, timeout: 2s}
      - {type: csrfInterceptor, timeout: 2s}
  - name: ops
    prefix: /ops
    target: main
    interceptors: [{type: basicAuth, usersFile: "$OPS_USERS", realm: ops, timeout: 2s}]
  - name: heavy
    prefix: /heavy
    target: main
    interceptors: [{type: basicAuth, usersFile: "$HEAVY_USERS", realm: heavy, timeout: 5s}]
  - {name: public, prefix: /, target: main}
`,
}

// site is one gateway (l7 serve with its authorization service, and
// Envoy) serving the operator's DSL directory and the objects of the
// test's namespaces, with a backend, a Redis with a password, the
// operator's declared interceptor (audit) and a tenant's collector.
type site struct {
	n int
	// hostIP is the gateway's node address on loopback; opVIP the
	// operator listener's VIP, VIPs of tenant objects follow it.
	hostIP, opVIP string
	nodeIP        string
	gw            *envoyproc.Gateway
	redis         *sessionRedis
	backend       *backend
	audit         *recorder
	collector     *recorder
	ns            namespaces
	dir           string
}

// namespaces are a test's: team-a (allowed the declarations), team-b (the
// attacker) and infra (the operator's Gateway).
type namespaces struct{ teamA, teamB, infra string }

// sessionRedis is a private Redis that requires a password, and a
// session store that uses it.
type sessionRedis struct {
	addr, file, password string
	sessions             *sessionstore.Redis
}

func startRedis(t *testing.T) *sessionRedis {
	t.Helper()
	rp := redisproc.StartForTest(t)
	const password = "r0gue-Redis_pass"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin := redis.NewClient(&redis.Options{Addr: rp.Addr})
	if err := admin.ConfigSet(ctx, "requirepass", password).Err(); err != nil {
		t.Fatalf("redis CONFIG SET requirepass: %v", err)
	}
	_ = admin.Close()
	file := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(file, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rc := sessionstore.NewClient(rp.Addr, "", password)
	t.Cleanup(func() { _ = rc.Close() })
	return &sessionRedis{addr: rp.Addr, file: file, password: password, sessions: sessionstore.NewRedis(rc, "")}
}

// nodeAddress returns an IPv4 address of this machine that is not
// loopback: backends listen there, since the API server refuses loopback
// addresses in EndpointSlices.
func nodeAddress(t *testing.T) string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.String()
			}
		}
	}
	t.Fatal("this machine has no non-loopback IPv4 address for the backends (the API server refuses loopback EndpointSlice addresses)")
	return ""
}

// htpasswd writes an htpasswd file of users (name -> password) at cost.
func htpasswd(t *testing.T, cost int, users map[string]string) string {
	t.Helper()
	var b strings.Builder
	for u, p := range users {
		h, err := bcrypt.GenerateFromPassword([]byte(p), cost)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(u + ":" + string(h) + "\n")
	}
	p := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startSite starts site n (1..11: addresses 127.0.26.20n to .20n+19) for
// the test's namespaces.
func startSite(t *testing.T, n int) *site {
	t.Helper()
	base := 20 * n
	s := &site{n: n, hostIP: fmt.Sprintf("127.0.26.%d", base), opVIP: fmt.Sprintf("127.0.26.%d", base+1), nodeIP: nodeAddress(t),
		ns: namespaces{teamA: fmt.Sprintf("team-a-%d", n), teamB: fmt.Sprintf("team-b-%d", n), infra: fmt.Sprintf("infra-%d", n)}}
	s.redis = startRedis(t)
	s.backend = startBackend(t, s.nodeIP, s.redis.sessions)
	s.audit = startRecorder(t, net.JoinHostPort(s.hostIP, strconv.Itoa(auditPort)))
	s.collector = startRecorder(t, net.JoinHostPort(s.hostIP, strconv.Itoa(collectorPort)))
	createNamespaces(t, s.ns.teamA, s.ns.teamB, s.ns.infra)

	s.dir = t.TempDir()
	r := strings.NewReplacer("$OPVIP", s.opVIP, "$OPPORT", strconv.Itoa(operatorPort), "$BACKEND", s.backend.addr,
		"$AUDIT", s.audit.url, "$TEAM_A", s.ns.teamA,
		"$OPS_USERS", htpasswd(t, 5, map[string]string{opsUser: opsPassword, devUser: devPassword}),
		"$HEAVY_USERS", htpasswd(t, 8, map[string]string{opsUser: opsPassword}))
	for name, body := range operatorFiles {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(r.Replace(body)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.gw = envoyproc.StartT(t, envoyproc.Options{Group: group, Authz: true, HostIP: s.hostIP, Serve: []string{
		"--config=" + s.dir, "--kubeconfig=" + server.Kubeconfig,
		"--namespaces=" + strings.Join([]string{s.ns.teamA, s.ns.teamB, s.ns.infra}, ","),
		"--authz-redis=" + s.redis.addr, "--authz-redis-password-file=" + s.redis.file,
	}})
	s.waitListener(t, net.JoinHostPort(s.opVIP, strconv.Itoa(operatorPort)))
	return s
}

// vip returns the i-th VIP of the site's tenant objects (i from 2).
func (s *site) vip(i int) string { return fmt.Sprintf("127.0.26.%d", 20*s.n+i) }

// operator is a client of the operator's listener.
func (s *site) operator(t *testing.T) *client {
	return clientOf(t, net.JoinHostPort(s.opVIP, strconv.Itoa(operatorPort)))
}

// waitListener waits until a connection to addr is accepted.
func (s *site) waitListener(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := s.gw.Wait(ctx, "listener "+addr, func(context.Context) (bool, string) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
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

// metric returns the sum of every series of one of l7's metrics whose
// labels contain every string of labels.
func (s *site) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.gw.Metrics + "/metrics")
	if err != nil {
		t.Fatalf("l7 /metrics: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("l7 /metrics line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// login logs in through the operator's listener and returns the session
// and CSRF cookies.
func (s *site) login(t *testing.T, user string) (session, csrf string) {
	t.Helper()
	r := s.operator(t).do(req{method: http.MethodPost, host: appHost, path: "/login?user=" + user})
	if r.status != http.StatusNoContent {
		t.Fatalf("POST /login: %d %q", r.status, r.body)
	}
	return r.cookies()["session"], r.cookies()["csrf_token"]
}
