package upstream

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/internal/poll"
)

// group is the gateway group of deploy/envoy/gateway.yaml, which the
// bootstrap declares; the tests' DSL files use it.
const group = "edge"

// gateway is a running l7 serve + Envoy and the DSL directory it serves.
type gateway struct {
	*envoyproc.Gateway
	dsl string
}

// setup says how to start a gateway.
type setup struct {
	// hostIP is the gateway node's address (stats and obs listeners).
	hostIP string
	// files are the DSL files (name -> content); certs/NAME files too.
	files map[string]string
	// serve are extra l7 serve arguments.
	serve []string
	// group is the group served (default "edge").
	group string
	// authz also runs l7's authorization service.
	authz bool
}

// startGateway writes the DSL files and starts l7 serve and Envoy on them;
// it returns once Envoy is ready.
func startGateway(t *testing.T, s setup) *gateway {
	t.Helper()
	dir := shortDir(t)
	dsl := filepath.Join(dir, "dsl")
	writeFiles(t, dsl, s.files)
	o := envoyproc.Options{Group: group, Dir: filepath.Join(dir, "gw"), HostIP: s.hostIP, Authz: s.authz,
		Serve: append([]string{"--config=" + dsl, "--debounce=50ms"}, s.serve...)}
	if s.group != "" && s.group != group {
		m, err := envoyproc.ManifestForGroup(dir, s.group)
		if err != nil {
			t.Fatal(err)
		}
		o.Group, o.Manifest = s.group, m
	}
	g := &gateway{Gateway: envoyproc.StartT(t, o), dsl: dsl}
	// Registered after StartT's cleanup, so it runs before the gateway
	// stops: what we emit must use no option Envoy calls deprecated.
	t.Cleanup(func() {
		for _, l := range strings.Split(g.LogTail("envoy", 1<<22), "\n") {
			if strings.Contains(strings.ToLower(l), "deprecated") {
				t.Errorf("Envoy warns of a deprecated option: %s", l)
			}
		}
	})
	return g
}

// write replaces (or adds) one DSL file of a running gateway.
func (g *gateway) write(t *testing.T, name, content string) {
	t.Helper()
	writeFiles(t, g.dsl, map[string]string{name: content})
}

// stat reads one of Envoy's counters or gauges.
func (g *gateway) stat(t *testing.T, name string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := g.Stat(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// accessLog returns Envoy's JSON access log lines so far (its stdout).
func (g *gateway) accessLog(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(g.LogTail("envoy", 1<<22), "\n") {
		if strings.HasPrefix(l, "{") && strings.Contains(l, `"response_flags"`) {
			out = append(out, l)
		}
	}
	return out
}

func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "up")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// writeFiles writes name -> content under dir, each file atomically
// (a rename), so the watching l7 never reads half a file.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for n, c := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".tmp")
		if err := os.WriteFile(tmp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
}

// freePort returns a port of 23000-23999 free on ip, from base on.
func freePort(t *testing.T, ip string, base int) int {
	t.Helper()
	for p := base; p < 24000; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(p)))
		if err == nil {
			_ = l.Close()
			return p
		}
	}
	t.Fatalf("no free port on %s from %d", ip, base)
	return 0
}

// client reaches one listener (VIP:port) whatever host a URL names.
type client struct {
	c    *http.Client
	base string // scheme://host of the requests
}

// newClient returns a client of the listener at vip:port for host, over
// TLS when tlsCfg is set, keeping connections alive.
func newClient(vip string, port int, host string, tlsCfg *tls.Config) *client {
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	return &client{c: envoyproc.ClientTo(net.JoinHostPort(vip, fmt.Sprint(port)), tlsCfg, true), base: scheme + "://" + host}
}

// reply is what a request got.
type reply struct {
	status int
	body   string
	header http.Header
	err    error
}

// backend names the backend that answered ("" for Envoy's own replies).
func (r reply) backend() string { return r.header.Get("x-backend") }

// do sends one request; hdr are header name, value pairs.
func (c *client) do(method, path string, hdr ...string) reply {
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		return reply{err: err}
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := c.c.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: string(b), header: resp.Header, err: err}
}

// get sends a GET and fails the test on a transport error.
func (c *client) get(t *testing.T, path string, hdr ...string) reply {
	t.Helper()
	r := c.do(http.MethodGet, path, hdr...)
	if r.err != nil {
		t.Fatalf("GET %s%s: %v", c.base, path, r.err)
	}
	return r
}

// spread sends n GETs and counts the answers by backend ("" for Envoy's
// own); any other status than 200 fails the test.
func (c *client) spread(t *testing.T, n int, path string, hdr ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i := 0; i < n; i++ {
		r := c.get(t, path, hdr...)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s (request %d of %d): %d %q", path, i+1, n, r.status, r.body)
		}
		out[r.backend()]++
	}
	return out
}

// waitServed waits until path answers want through the gateway (a new or
// changed DSL file takes a moment to reach Envoy).
func (c *client) waitServed(t *testing.T, path string, want int, hdr ...string) {
	t.Helper()
	poll.Explained(t, time.Minute, fmt.Sprintf("%s%s answers %d", c.base, path, want), func() (bool, string) {
		r := c.do(http.MethodGet, path, hdr...)
		return r.err == nil && r.status == want, fmt.Sprintf("%d %q %v", r.status, r.body, r.err)
	})
}
