//go:build lab

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/ipvs"

	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/integration/gatewaylab"
	"github.com/tlbproject/tlb/integration/tlstest"
)

// deployedHealth is the director's gateway health: the very health: section
// deploy/site/director.yaml ships (Envoy's :9902/ready).
func deployedHealth(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "site", "director.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, h, ok := strings.Cut(string(b), "\nhealth:\n")
	if !ok {
		t.Fatal("deploy/site/director.yaml has no health: section")
	}
	return "health:\n" + h
}

// healthDC is the data center of TestGatewayHealthAndDrain: the API
// server, a director in Kubernetes mode, two gateway nodes with netd,
// the real Envoy and the site's backends.
type healthDC struct {
	*dc
	c      *cluster
	bin    string
	gws    []*envoyproc.Gateway
	https  *http.Client
	ipvs   *ipvs.Handle // the director's IPVS, read by the test
	target netip.AddrPort
}

// TestGatewayHealthAndDrain (issue 25, item 4): a director in Kubernetes
// mode with the health: section deploy/ ships, two gateway nodes each
// running netd and the real Envoy (as deploy/envoy runs it):
//
//   - no-service: with no Service the director is Ready, GTM knows no
//     VIP and BIRD has no route from it.
//   - drain: `tlb drain gateway1` under load: gateway1 goes to weight 0,
//     its downloads in flight complete, no request fails, and its real
//     server is removed after they have ended (at the drain timeout:
//     IPVS still counts connections it saw no end of as active);
//     `tlb undrain` brings it back.
//   - envoy-killed: gateway1's Envoy SIGKILLed under load: weight 0
//     within 3 s, no new connection fails after that.
func TestGatewayHealthAndDrain(t *testing.T) {
	began := time.Now()
	h := startHealthDC(t)
	t.Logf("the data center ready %v after the test began", since(began))
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{{"drain", h.drain}, {"envoy-killed", h.envoyKilled}} {
		if !t.Run(step.name, step.run) {
			t.Logf("director IPVS:\n%s", h.director.Run(t, "ipvsadm", "-Ln"))
			return
		}
	}
	t.Logf("BENCH gateway_health_and_drain_s %d s", int(time.Since(began).Seconds()))
}

func startHealthDC(t *testing.T) *healthDC {
	t.Helper()
	h := &healthDC{bin: os.Getenv("TLB_BIN_DIR")}
	if h.bin == "" {
		t.Fatal("TLB_BIN_DIR is not set: run through tools/lab-test.sh")
	}
	h.c = startCluster(t)
	h.dc = buildDC(t, 2)
	for _, n := range append(h.gateways[:len(h.gateways):len(h.gateways)], h.director) {
		reachAPIServer(t, n, h.c.hostport)
	}
	h.c.createPool(t, l4cluster, env, "lab-east-a", pool)
	for i, gw := range h.gateways {
		h.c.createGatewayNode(t, gw.Name, h.gatewayAddr[i])
	}
	tmp := t.TempDir()
	startLogged(t, filepath.Join(h.bin, "ipam"), tmp, "ipam", "--kubeconfig", h.c.ipamKC,
		"--metrics-addr", "127.0.0.1:9470", "--leader-election-namespace", "tlb-system", "--identity", "e2e")
	for _, gw := range h.gateways {
		gw.Start(t, filepath.Join(h.bin, "netd"), "run", "--config", filepath.Join(repoRoot(t), "deploy", "netd", "netd.yaml"),
			"--kubeconfig", h.c.netdKC, "--node", gw.Name)
	}
	// The site's backends live on the gateway nodes themselves.
	site := gatewaylab.Site{VIP: gatewayVIP, BackendNodes: h.gatewayAddr, CA: tlstest.NewCA(t)}
	site.StartBackends(t, h.gateways)
	h.gws = gatewaylab.StartGateways(t, h.gateways, h.gatewayAddr, site.Write(t))
	h.https = gatewaylab.Client(h.client, gatewayVIP+":443", site.CA, false)

	dcfg := filepath.Join(tmp, "director.yaml")
	err := os.WriteFile(dcfg, fmt.Appendf(nil, `director:
  metricsAddress: 127.0.0.1:9100
  runtimeDir: %s
  drainPeriod: 1s
  resyncInterval: 5s
bgp:
  localASN: 64512
  routerID: 198.18.1.2
  allowedPrefixes: [%s]
  peers:
    - {address: 198.18.1.1, asn: 64500, localAddress: 198.18.1.2, holdTimeSeconds: 3, keepaliveSeconds: 1}
%s`, filepath.Join(tmp, "director-run"), pool, deployedHealth(t)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	h.director.Start(t, filepath.Join(h.bin, "tlb"), "run", "--config", dcfg, "--kubeconfig", h.c.directorKC,
		"--l4-cluster", l4cluster, "--gateway-drain-timeout", drainTimeout.String())
	if h.ipvs, err = ipvs.New(h.director.NsPath()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.ipvs.Close)
	h.noService(t)

	h.c.mustCreateNamespace(t, "shop")
	h.c.createGatewayService(t, "shop", "edge")
	h.target = netip.MustParseAddrPort(gatewayVIP + ":443")
	waitFor(t, 2*time.Minute, "IPVS "+h.target.String()+" sends to both gateways at weight 1", func() bool {
		w := h.weights()
		return w[h.gatewayAddr[0]] == 1 && w[h.gatewayAddr[1]] == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := h.bird.WaitRoutes(ctx, pool, 2*time.Minute, func(rs []birdlab.Route) bool { return len(rs) == 1 }); err != nil {
		t.Fatalf("the router learns %s from the director: %v", pool, err)
	}
	waitFor(t, time.Minute, "HTTPS through the VIP answers", func() bool {
		_, err := gatewaylab.Get(ctx, h.https, webRoute)
		return err == nil
	})
	return h
}

var webRoute = gatewaylab.Route{Host: gatewaylab.ShopHost, Path: "/", Upstream: "web"}

// noService: before any Service the director is Ready, and says so
// truthfully: GTM lists no VIP and nothing is announced.
func (h *healthDC) noService(t *testing.T) {
	t.Helper()
	var body string
	waitFor(t, 2*time.Minute, "the director is Ready with no Service", func() bool {
		body = readyz(h.director, "127.0.0.1:9100")
		return strings.HasPrefix(body, "200 ")
	})
	code, vips := h.gtm(t, "/vip/")
	routes, err := h.bird.Routes(context.Background(), pool)
	t.Logf("no Service: /readyz %q, GET /vip/ %d %q, BIRD routes for %s: %v (%v)", body, code, vips, pool, routes, err)
	if code != http.StatusOK || vips != "" || len(routes) != 0 {
		t.Errorf("with no Service: GTM %d %q and %d routes; want no VIP and nothing announced", code, vips, len(routes))
	}
}

// gtm answers GET path on the director's obs listener.
func (h *healthDC) gtm(t *testing.T, path string) (int, string) {
	t.Helper()
	hc := h.director.HTTPClient()
	hc.Timeout = 5 * time.Second
	resp, err := hc.Get("http://127.0.0.1:9100" + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// weights returns the real servers of VIP:443 in the director's IPVS
// and their weights (nil while it has no such service).
func (h *healthDC) weights() map[string]int {
	svcs, err := h.ipvs.GetServices()
	if err != nil {
		return nil
	}
	for _, s := range svcs {
		if a, ok := netip.AddrFromSlice(s.Address); !ok || a.Unmap() != h.target.Addr() || s.Port != h.target.Port() || s.Protocol != syscall.IPPROTO_TCP {
			continue
		}
		dests, err := h.ipvs.GetDestinations(s)
		if err != nil {
			return nil
		}
		w := map[string]int{}
		for _, d := range dests {
			w[d.Address.String()] = d.Weight
		}
		return w
	}
	return nil
}

// activeTo returns the active connections IPVS holds to real server rs
// over all the director's services.
func (h *healthDC) activeTo(rs string) int {
	n := 0
	svcs, _ := h.ipvs.GetServices()
	for _, s := range svcs {
		dests, _ := h.ipvs.GetDestinations(s)
		for _, d := range dests {
			if d.Address.String() == rs {
				n += d.ActiveConnections
			}
		}
	}
	return n
}

// tlbCLI runs the tlb binary as an operator would, with an admin's
// kubeconfig, and returns its output.
func (h *healthDC) tlbCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(h.bin, "tlb"), append(args, "--kubeconfig", h.c.server.Kubeconfig)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tlb %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// requests is a client load: workers each sending one HTTPS request per
// new connection (a new flow through the director) until stopped, each
// outcome recorded with the time it began.
type requests struct {
	mu       sync.Mutex
	outcomes []outcome
	stop     context.CancelFunc
	wg       sync.WaitGroup
}

type outcome struct {
	began   time.Time
	gateway string
	err     error
}

func (h *healthDC) startLoad(t *testing.T, workers int) *requests {
	ctx, stop := context.WithCancel(context.Background())
	r := &requests{stop: stop}
	t.Cleanup(func() { r.end() })
	for range workers {
		r.wg.Go(func() {
			// At most one request per 100 ms per worker: the emulated
			// CPUs also run both Envoys, the director's probes and BGP.
			pace := time.NewTicker(100 * time.Millisecond)
			defer pace.Stop()
			for ctx.Err() == nil {
				select {
				case <-pace.C:
				case <-ctx.Done():
					return
				}
				began := time.Now()
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				a, err := gatewaylab.Get(rctx, h.https, webRoute)
				cancel()
				if ctx.Err() != nil {
					return // stopped mid-request: not an outcome
				}
				r.mu.Lock()
				r.outcomes = append(r.outcomes, outcome{began: began, gateway: a.Gateway, err: err})
				r.mu.Unlock()
			}
		})
	}
	return r
}

// end stops the load and returns its outcomes.
func (r *requests) end() []outcome {
	r.stop()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.outcomes
}

// count returns how many requests gateway answered so far.
func (r *requests) count(gateway string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, o := range r.outcomes {
		if o.err == nil && o.gateway == gateway {
			n++
		}
	}
	return n
}
