//go:build lab

package director_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/internal/poll"
)

const (
	vip       = "203.0.113.10"
	vipSubnet = "203.0.113.0/24"
	// drain is the directors' director.drainPeriod.
	drain = 3 * time.Second
	// Health checks: generous for the emulated VM (5-10x slower than a node).
	healthInterval = time.Second
	healthFall     = 3
)

// dc is the data center: client -- router (BIRD, ECMP, L4 hash) --
// director1, director2 (tlb run with bgp+health); router -- gateway1,
// gateway2 (netd, an echo server on the VIP, a health endpoint; or,
// with dcOptions.envoy, what the test starts there); router -- app1, ...
// (backend nodes, with dcOptions.apps).
type dc struct {
	client, router *topo.Node
	directors      []*topo.Node
	directorAddr   []string
	gateways       []*topo.Node
	gatewayAddr    []string
	healthy        []*atomic.Bool  // each gateway's health endpoint answers 200 while true
	accepted       []*atomic.Int64 // connections each gateway's echo server accepted
	tlb            []*exec.Cmd
	tlbConfig      []string
	bird           *birdlab.Router
	bin            string
	opts           dcOptions
	// apps are nodes behind the router for application (L7) backends,
	// app i+1 at appAddrs[i] (appAddr(i)); dcOptions.apps of them.
	apps     []*topo.Node
	appAddrs []string

	// directorAddr6 and gatewayAddr6 are the nodes' IPv6 addresses, with
	// dcOptions.ipv6 (dualstack_lab_test.go).
	directorAddr6, gatewayAddr6 []string
}

func labBin(t *testing.T) string {
	bin := os.Getenv("TLB_BIN_DIR")
	if bin == "" {
		t.Fatal("TLB_BIN_DIR is not set: run through tools/lab-test.sh")
	}
	return bin
}

// buildDC builds the topology, starts BIRD and the gateways; the
// directors' tlb is started by startDirector.
func buildDC(t *testing.T) *dc {
	t.Helper()
	return buildDCWith(t, dcOptions{})
}

// buildDCWith is buildDC varied by opts.
func buildDCWith(t *testing.T, opts dcOptions) *dc {
	t.Helper()
	lab := topo.New(t)
	d := &dc{client: lab.Node("client"), router: lab.Node("router"), bin: labBin(t), opts: opts}
	lab.Link(d.client, d.router, "198.18.0.2/24", "198.18.0.1/24")
	d.client.AddRoute(t, "default", "198.18.0.1")
	// A stalled TCP flow must not move to the other director by itself:
	// with txrehash=1 a retransmission timeout picks a new flow hash and the
	// router's ECMP follows it (LAB.md, kernel facts). Real routers hash the
	// 5-tuple, so the director-loss tests prove survival with it off.
	d.client.Sysctl(t, "net.core.txrehash", "0")
	for k, v := range map[string]string{
		"net.ipv4.ip_forward": "1", "net.ipv4.fib_multipath_hash_policy": "1",
		"net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0",
	} {
		d.router.Sysctl(t, k, v)
	}
	var nbrs []birdlab.Neighbor
	for i := 1; i <= 2; i++ {
		dir := lab.Node(fmt.Sprintf("director%d", i))
		addr := fmt.Sprintf("198.18.%d.2", i)
		lab.Link(dir, d.router, addr+"/24", fmt.Sprintf("198.18.%d.1/24", i))
		dir.AddRoute(t, "default", fmt.Sprintf("198.18.%d.1", i))
		d.directors, d.directorAddr = append(d.directors, dir), append(d.directorAddr, addr)
		nbrs = append(nbrs, birdlab.Neighbor{Name: dir.Name, Address: addr, ASN: 64512, Local: fmt.Sprintf("198.18.%d.1", i), BFD: opts.bfd})

		gw := lab.Node(fmt.Sprintf("gateway%d", i))
		gaddr := fmt.Sprintf("198.18.%d.2", 10+i)
		lab.Link(gw, d.router, gaddr+"/24", fmt.Sprintf("198.18.%d.1/24", 10+i))
		gw.AddRoute(t, "default", fmt.Sprintf("198.18.%d.1", 10+i))
		d.gateways, d.gatewayAddr = append(d.gateways, gw), append(d.gatewayAddr, gaddr)
	}
	for i := range opts.apps {
		app, addr := lab.Node(fmt.Sprintf("app%d", i+1)), appAddr(i)
		lab.Link(app, d.router, addr+"/24", fmt.Sprintf("198.18.%d.1/24", 21+i))
		app.AddRoute(t, "default", fmt.Sprintf("198.18.%d.1", 21+i))
		d.apps, d.appAddrs = append(d.apps, app), append(d.appAddrs, addr)
	}
	if opts.ipv6 {
		d.addIPv6(t)
	}
	rc := birdlab.RouterConfig{RouterID: "198.18.0.1", ASN: 64500, Neighbors: nbrs, IPv6: opts.ipv6}
	if opts.bfd {
		rc.BFD = &birdlab.BFD{MinRxMilliseconds: 100, MinTxMilliseconds: 100, Multiplier: 5}
	}
	d.bird = birdlab.StartForTest(t, d.router.NsName(), rc)

	tmp := t.TempDir()
	for i, gw := range d.gateways {
		vips := opts.served()
		cfg := writeFile(t, tmp, gw.Name+".yaml", fmt.Sprintf("netd:\n  metricsAddress: 127.0.0.1:9101\n  mss: 1440\nvips: ['%s']\n", strings.Join(vips, "', '")))
		gw.Start(t, filepath.Join(d.bin, "netd"), "run", "--config", cfg)
		waitUntil(t, 60*time.Second, gw.Name+" binds the VIPs on its tunnels", func() bool {
			return !slices.ContainsFunc(vips, func(v string) bool { return !bound(gw, v) })
		})
		if opts.envoy {
			continue
		}
		var n atomic.Int64
		d.accepted = append(d.accepted, &n)
		echo(t, gw, vip, &n)
		ok := &atomic.Bool{}
		ok.Store(true)
		d.healthy = append(d.healthy, ok)
		healthEndpoint(t, gw, d.gatewayAddr[i], ok)
		if opts.ipv6 {
			echo(t, gw, vip6, &n)
			healthEndpoint(t, gw, d.gatewayAddr6[i], ok)
		}
	}
	for i, dir := range d.directors {
		d.tlbConfig = append(d.tlbConfig, writeFile(t, tmp, dir.Name+".yaml", d.directorConfig(i, filepath.Join(tmp, dir.Name))))
	}
	d.tlb = make([]*exec.Cmd, len(d.directors))
	return d
}

// directorConfig is director i's whole config: each VIP's service with mh
// over both gateways (and its L7 backends, if any), BGP to the router,
// HTTP health checks.
func (d *dc) directorConfig(i int, runtimeDir string) string {
	var b strings.Builder
	ranges := strings.Join(d.opts.ranges(), ", ")
	fmt.Fprintf(&b, "director:\n  metricsAddress: 127.0.0.1:9100\n  runtimeDir: %s\n  vipRanges: [%s]\n  drainPeriod: %s\n", runtimeDir, ranges, drain)
	b.WriteString("services:\n")
	for _, v := range d.opts.served() {
		for k, port := range d.opts.servicePorts() {
			fmt.Fprintf(&b, "  - vip: %s\n    port: %d\n    protocol: tcp\n    scheduler: mh\n    realServers:\n", v, port)
			for _, g := range d.gatewaysOf(v) {
				fmt.Fprintf(&b, "      - {address: '%s', weight: 1}\n", g)
			}
			if bs := d.opts.l7Backends[v]; len(bs) > 0 && k == 0 {
				fmt.Fprintf(&b, "    l7Backends: [%s]\n", strings.Join(bs, ", "))
			}
		}
	}
	fmt.Fprintf(&b, "bgp:\n  localASN: 64512\n  routerID: %s\n  allowedPrefixes: [%s]\n  peers:\n    - {address: 198.18.%d.1, asn: 64500, localAddress: %s, holdTimeSeconds: 3, keepaliveSeconds: 1, bfd: {enabled: %t}}\n",
		d.directorAddr[i], ranges, i+1, d.directorAddr[i], d.opts.bfd)
	if d.opts.ipv6 {
		fmt.Fprintf(&b, "  nextHopIPv6: '%s'\n", d.directorAddr6[i])
	}
	// The gateways' health: the test's endpoint, or Envoy's read-only
	// stats listener, which answers 503 once Envoy is draining.
	port, path := 8081, "/healthz"
	if d.opts.envoy {
		port, path = 9902, "/ready"
	}
	fmt.Fprintf(&b, "health:\n  kind: http\n  port: %d\n  path: %s\n  interval: %s\n  timeout: %s\n  rise: 2\n  fall: %d\n",
		port, path, healthInterval, healthInterval, healthFall)
	if d.opts.announce != "" {
		fmt.Fprintf(&b, "  announce: %s\n", d.opts.announce)
	}
	return b.String()
}

// startDirector runs the real tlb binary in director i.
func (d *dc) startDirector(t *testing.T, i int) {
	t.Helper()
	d.tlb[i] = d.directors[i].Start(t, filepath.Join(d.bin, "tlb"), "run", "--config", d.tlbConfig[i])
}

// startBoth starts both directors and waits until BIRD and the router's
// kernel route the VIP subnet through both.
func (d *dc) startBoth(t *testing.T) {
	t.Helper()
	d.startDirector(t, 0)
	d.startDirector(t, 1)
	if _, _, err := d.bird.WaitRoutes(context.Background(), vipSubnet, 90*time.Second, hasNextHops(d.directorAddr...)); err != nil {
		d.diagnose(t)
		t.Fatalf("both directors in bird: %v", err)
	}
	d.waitKernelNextHops(t, 2)
}

func (d *dc) waitKernelNextHops(t *testing.T, n int) {
	t.Helper()
	d.waitKernelNextHopsOf(t, vipSubnet, n)
}

// waitKernelNextHopsOf waits until the router's kernel routes prefix (of
// either family) through n next hops.
func (d *dc) waitKernelNextHopsOf(t *testing.T, prefix string, n int) {
	t.Helper()
	waitUntil(t, 30*time.Second, fmt.Sprintf("the router's kernel has a %d-nexthop route to %s", n, prefix), func() bool {
		out, _ := d.router.Cmd("ip", ipFamily(prefix), "route", "show", prefix).CombinedOutput()
		if n == 1 {
			return strings.Contains(string(out), prefix) && !strings.Contains(string(out), "nexthop")
		}
		return strings.Count(string(out), "nexthop via") == n
	})
}

// get fetches a path from director i's obs listener (loopback in its namespace).
func (d *dc) get(i int, path string) (int, string, error) {
	resp, err := d.directors[i].HTTPClient().Get("http://127.0.0.1:9100" + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

// diagnose logs the state of every node, for a failed test.
func (d *dc) diagnose(t *testing.T) {
	show := func(n *topo.Node, args ...string) {
		out, err := n.Cmd(args[0], args[1:]...).CombinedOutput()
		t.Logf("%s$ %s (err %v)\n%s", n.Name, strings.Join(args, " "), err, out)
	}
	show(d.router, "ip", "route")
	if d.opts.ipv6 {
		show(d.router, "ip", "-6", "route")
	}
	for i, n := range d.directors {
		show(n, "ipvsadm", "-Ln", "--stats")
		show(n, "ip", "route", "show", "table", "local")
		code, body, err := d.get(i, "/readyz")
		t.Logf("%s /readyz: %d %q %v", n.Name, code, body, err)
	}
	out, _ := d.bird.Birdc(context.Background(), "show", "protocols")
	t.Logf("birdc show protocols:\n%s", out)
}

// healthEndpoint serves GET /healthz on <gateway>:8081: 200 while ok, else 503.
func healthEndpoint(t *testing.T, gw *topo.Node, addr string, ok *atomic.Bool) {
	ln, err := gw.Listen("tcp", net.JoinHostPort(addr, "8081"))
	if err != nil {
		t.Fatalf("health endpoint in %s: %v", gw.Name, err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !ok.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// echo serves a TCP echo on addr:80 (a VIP) inside gateway gw, counting
// connections.
func echo(t *testing.T, gw *topo.Node, addr string, accepted *atomic.Int64) {
	ln, err := gw.Listen("tcp", net.JoinHostPort(addr, "80"))
	if err != nil {
		t.Fatalf("listen on the VIP in %s: %v", gw.Name, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
}

// appAddr is the address of backend node app i+1.
func appAddr(i int) string { return fmt.Sprintf("198.18.%d.2", 21+i) }

// hasNextHops matches exactly these next hops (sorted, as Routes returns them).
func hasNextHops(want ...string) func([]birdlab.Route) bool {
	return func(rs []birdlab.Route) bool {
		if len(rs) != len(want) {
			return false
		}
		for i, r := range rs {
			if r.NextHop != want[i] {
				return false
			}
		}
		return true
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitUntil(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	poll.Until(t, within, what, ok)
}
