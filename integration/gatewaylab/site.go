package gatewaylab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/integration/topo"
)

// The site's hosts and the ports of its upstreams on every backend node.
const (
	// ShopHost is served by upstream web (/) and api (/api).
	ShopHost = "shop.example.com"
	// MediaHost is served by upstream files (downloads).
	MediaHost = "media.example.com"
	WebPort   = 8080
	APIPort   = 8081
	FilesPort = 8082
)

// Site is the L7 configuration of the lab's VIP, as a DSL directory for
// "l7 serve --config": gateway "public" with VIP:80 redirecting to
// https and VIP:443 terminating TLS with a certificate per host (chosen
// by SNI) from the test CA; service "shop" (ShopHost: / to upstream web,
// /api to upstream api, which Envoy health-checks actively and ejects on
// gateway failures) and service "media" (MediaHost: / to upstream files).
// Every upstream has one endpoint on each backend node.
type Site struct {
	// VIP is the listeners' address.
	VIP string
	// BackendNodes are the backend nodes' addresses.
	BackendNodes []string
	// CA signs the certificates; clients trust its Pool.
	CA *tlstest.CA
	// APIHealth is the active health check of upstream api; the zero
	// value means QuickHealth.
	APIHealth HealthCheck
}

// QuickHealth checks every second, with a second's timeout: an endpoint
// is unhealthy after 2 failures, healthy again after 1 success, ejected
// after 2 gateway failures.
func QuickHealth() HealthCheck {
	return HealthCheck{Interval: time.Second, Timeout: time.Second, Unhealthy: 2, Healthy: 1, GatewayFailures: 2}
}

// APICheck is the active health check upstream api gets.
func (s Site) APICheck() HealthCheck {
	if s.APIHealth == (HealthCheck{}) {
		return QuickHealth()
	}
	return s.APIHealth
}

// HealthCheck is an upstream's active health check in the DSL, and the
// outlier detection beside it.
type HealthCheck struct {
	Interval, Timeout  time.Duration
	Unhealthy, Healthy int
	// GatewayFailures ejects an endpoint after so many consecutive
	// gateway failures (502/503/504, connect failures).
	GatewayFailures int
}

// DetectWithin is the longest the check should take to mark a stopped
// endpoint unhealthy: Unhealthy probes, each up to an interval (plus
// Envoy's 10% jitter) and its timeout.
func (h HealthCheck) DetectWithin() time.Duration {
	return time.Duration(h.Unhealthy) * (h.Interval + h.Interval/10 + h.Timeout)
}

// Endpoints are the ip:port of every backend of upstream port.
func (s Site) Endpoints(port int) []string {
	var out []string
	for _, n := range s.BackendNodes {
		out = append(out, fmt.Sprintf("%s:%d", n, port))
	}
	return out
}

// AllEndpoints are every backend of the VIP, e.g. the directors'
// l7Backends.
func (s Site) AllEndpoints() []string {
	return append(append(s.Endpoints(WebPort), s.Endpoints(APIPort)...), s.Endpoints(FilesPort)...)
}

// StartBackends starts every backend of the site, the node at
// BackendNodes[i] being nodes[i].
func (s Site) StartBackends(t topo.T, nodes []*topo.Node) []*Backend {
	t.Helper()
	var out []*Backend
	for i, n := range nodes {
		for _, u := range []struct {
			name string
			port int
		}{{"web", WebPort}, {"api", APIPort}, {"files", FilesPort}} {
			out = append(out, StartBackend(t, n, u.name, fmt.Sprintf("%s:%d", s.BackendNodes[i], u.port)))
		}
	}
	return out
}

// Write writes the DSL and the certificates into a new temporary
// directory readable by the gateway manifest's user (l7 serve runs as
// it), removed at the end of t, and returns it.
func (s Site) Write(t topo.T) string {
	t.Helper()
	spec, err := envoyproc.ReadSpec(manifest(t))
	if err != nil {
		t.Fatalf("gatewaylab: %v", err)
	}
	dir, err := os.MkdirTemp("", "tlb-site-")
	if err != nil {
		t.Fatalf("gatewaylab: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	files := map[string][]byte{"gateway.yaml": []byte(s.gatewayDoc()), "shop.yaml": []byte(s.shopDoc()), "media.yaml": []byte(s.mediaDoc())}
	for name, host := range map[string]string{"shop": ShopHost, "media": MediaHost} {
		chain, key := s.CA.Issue(fatal{t}, host)
		files["certs/"+name+".crt"], files["certs/"+name+".key"] = chain, key
	}
	if err := os.Mkdir(filepath.Join(dir, "certs"), 0o750); err != nil {
		t.Fatalf("gatewaylab: %v", err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o640); err != nil {
			t.Fatalf("gatewaylab: %v", err)
		}
	}
	err = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, int(spec.UID), int(spec.GID))
	})
	if err != nil {
		t.Fatalf("gatewaylab: give %s to the gateway's user: %v", dir, err)
	}
	return dir
}

func (s Site) gatewayDoc() string {
	return fmt.Sprintf(`kind: gateway/gateway/v1
name: public
group: edge
listeners:
  - {name: web, vip: %[1]s, port: 80, protocol: HTTP, redirectHTTPS: true}
  - name: secure
    vip: %[1]s
    port: 443
    protocol: HTTPS
    certificates:
      - {name: shop, sni: [%[2]s], certFile: certs/shop.crt, keyFile: certs/shop.key}
      - {name: media, sni: [%[3]s], certFile: certs/media.crt, keyFile: certs/media.key}
`, s.VIP, ShopHost, MediaHost)
}

func (s Site) shopDoc() string {
	h := s.APICheck()
	return fmt.Sprintf(`kind: gateway/service/v1
name: shop
group: edge
hosts: [%s]
listeners: [public/secure]
upstreams:
  - {name: web, endpoints: [%s]}
  - name: api
    endpoints: [%s]
    healthCheck:
      http: {path: /healthz}
      interval: %s
      timeout: %s
      unhealthyThreshold: %d
      healthyThreshold: %d
    outlierDetection: {consecutiveGatewayFailure: %d}
routes:
  - {prefix: /api, target: api}
  - {prefix: /, target: web}
`, ShopHost, quoted(s.Endpoints(WebPort)), quoted(s.Endpoints(APIPort)), h.Interval, h.Timeout, h.Unhealthy, h.Healthy, h.GatewayFailures)
}

func (s Site) mediaDoc() string {
	return fmt.Sprintf(`kind: gateway/service/v1
name: media
group: edge
hosts: [%s]
listeners: [public/secure]
upstreams:
  - {name: files, endpoints: [%s]}
routes:
  - {prefix: /, target: files}
`, MediaHost, quoted(s.Endpoints(FilesPort)))
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = `"` + s + `"`
	}
	return strings.Join(q, ", ")
}

// fatal adapts a topo.T to tlstest.T.
type fatal struct{ t topo.T }

func (f fatal) Helper()        { f.t.Helper() }
func (f fatal) Fatal(a ...any) { f.t.Fatalf("%s", fmt.Sprint(a...)) }

// manifest is the gateway DaemonSet of this module.
func manifest(t topo.T) string {
	root, err := envoyproc.ModuleRoot()
	if err != nil {
		t.Fatalf("gatewaylab: %v", err)
	}
	return filepath.Join(root, "deploy", "envoy", "gateway.yaml")
}
