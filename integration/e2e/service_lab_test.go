//go:build lab

package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/internal/poll"
)

const (
	pool      = "203.0.113.0/28"
	l4cluster = "lab-east"
	env       = "lab"
)

// dc is the data center: client -- router (BIRD) -- director (tlb run
// --kubeconfig); router -- gateway1, gateway2 (netd run --kubeconfig, a
// web server on port 80 of every local address).
type dc struct {
	client, router, director *topo.Node
	gateways                 []*topo.Node
	gatewayAddr              []string
	bird                     *birdlab.Router
}

func buildDC(t *testing.T, gateways int) *dc {
	t.Helper()
	lab := topo.New(t)
	d := &dc{client: lab.Node("client"), router: lab.Node("router"), director: lab.Node("director")}
	lab.Link(d.client, d.router, "198.18.0.2/24", "198.18.0.1/24")
	d.client.AddRoute(t, "default", "198.18.0.1")
	d.router.Sysctl(t, "net.ipv4.ip_forward", "1")
	lab.Link(d.director, d.router, "198.18.1.2/24", "198.18.1.1/24")
	d.director.AddRoute(t, "default", "198.18.1.1")
	for i := 1; i <= gateways; i++ {
		gw := lab.Node(fmt.Sprintf("gateway%d", i))
		addr := fmt.Sprintf("198.18.%d.2", 10+i)
		lab.Link(gw, d.router, addr+"/24", fmt.Sprintf("198.18.%d.1/24", 10+i))
		gw.AddRoute(t, "default", fmt.Sprintf("198.18.%d.1", 10+i))
		d.gateways, d.gatewayAddr = append(d.gateways, gw), append(d.gatewayAddr, addr)
	}
	d.bird = birdlab.StartForTest(t, d.router.NsName(), birdlab.RouterConfig{
		RouterID: "198.18.0.1", ASN: 64500,
		Neighbors: []birdlab.Neighbor{{Name: "director", Address: "198.18.1.2", ASN: 64512, Local: "198.18.1.1"}},
	})
	return d
}

// serveWhoAmI answers GET / on addr of gateway gw with the gateway's name,
// tag and the client address the request came from. It binds addr with
// IP_FREEBIND, as the gateways' Envoy listeners bind their VIP:port, so it
// may start before netd binds the VIP.
func serveWhoAmI(t *testing.T, gw *topo.Node, addr, tag string) {
	ln, err := gw.ListenFreebind("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s in %s: %v", addr, gw.Name, err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s/%s %s", gw.Name, tag, r.RemoteAddr)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// TestServiceReachableThroughDirectorAndGateway: a LoadBalancer Service
// created in the API server gets a VIP from the pool; the director serves
// it with IPVS over both Ready gateway nodes and announces the pool to the
// router; both gateways bind it; a client reaches it with its own address
// seen by the gateway and no reply through the director. Each VIP:80
// reaches only the listener bound on that VIP:port (freebind, before netd
// binds it; no port map), as the gateways' Envoy listeners do. A node
// turning NotReady gets no new flows. Deleting the Service
// releases the VIP and takes it out of IPVS and off the gateways.
func TestServiceReachableThroughDirectorAndGateway(t *testing.T) {
	bin := os.Getenv("TLB_BIN_DIR")
	if bin == "" {
		t.Fatal("TLB_BIN_DIR is not set: run through tools/lab-test.sh")
	}
	c := startCluster(t)
	d := buildDC(t, 2)
	var relays []*apiRelay
	for _, n := range append([]*topo.Node{d.director}, d.gateways...) {
		relays = append(relays, reachAPIServer(t, n, c.hostport))
	}
	c.createPool(t, l4cluster, env, "lab-east-a", pool)
	for i, gw := range d.gateways {
		c.createGatewayNode(t, gw.Name, d.gatewayAddr[i])
	}
	tmp := t.TempDir()

	// The controllers, each with its own ServiceAccount's token; netd with
	// the very file deploy/netd ships.
	startLogged(t, filepath.Join(bin, "ipam"), tmp, "ipam", "--kubeconfig", c.ipamKC,
		"--metrics-addr", "127.0.0.1:9470", "--leader-election-namespace", "tlb-system", "--identity", "e2e")
	netdFile := filepath.Join(repoRoot(t), "deploy", "netd", "netd.yaml")
	for _, gw := range d.gateways {
		gw.Start(t, filepath.Join(bin, "netd"), "run", "--config", netdFile, "--kubeconfig", c.netdKC, "--node", gw.Name)
	}
	// The file's router ID is a placeholder; --router-id sets this
	// director's, as the DaemonSet does with the node's IP.
	dcfg := filepath.Join(tmp, "director.yaml")
	err := os.WriteFile(dcfg, fmt.Appendf(nil, `director:
  metricsAddress: 127.0.0.1:9100
  runtimeDir: %s
  drainPeriod: 2s
  resyncInterval: 5s
bgp:
  localASN: 64512
  routerID: 192.0.2.1
  allowedPrefixes: [%s]
  peers:
    - {address: 198.18.1.1, asn: 64500, localAddress: 198.18.1.2, holdTimeSeconds: 3, keepaliveSeconds: 1}
`, filepath.Join(tmp, "director-run"), pool), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	d.director.Start(t, filepath.Join(bin, "tlb"), "run", "--config", dcfg, "--kubeconfig", c.directorKC,
		"--l4-cluster", l4cluster, "--router-id", "198.18.1.2")

	// The Services, as users would write them.
	c.mustCreateNamespace(t, "shop")
	created := time.Now()
	c.createService(t, "shop", "web", nil)
	c.createService(t, "shop", "store", map[string]string{api.AnnotationL7: "true"})
	vip := c.waitVIP(t, "shop", "web", created)
	l7VIP := c.waitVIP(t, "shop", "store", created)
	target, l7Target := net.JoinHostPort(vip, "80"), net.JoinHostPort(l7VIP, "80")
	for _, gw := range d.gateways {
		// A plain L4 backend on the first VIP, and the stand-in for the L7
		// gateway's Envoy listener on the L7 Service's VIP, both bound on
		// their own VIP:80.
		serveWhoAmI(t, gw, target, "l4")
		serveWhoAmI(t, gw, l7Target, "l7")
	}

	for _, tg := range []string{target, l7Target} {
		waitFor(t, 2*time.Minute, "the director programs IPVS service "+tg+" over both gateways", func() bool {
			out, _ := d.director.Cmd("ipvsadm", "-Ln", "-t", tg).CombinedOutput()
			return strings.Contains(string(out), d.gatewayAddr[0]+":80") && strings.Contains(string(out), d.gatewayAddr[1]+":80")
		})
	}
	t.Logf("IPVS services after %s:\n%s", since(created), d.director.Run(t, "ipvsadm", "-Ln"))
	for _, gw := range d.gateways {
		waitFor(t, 2*time.Minute, gw.Name+" binds "+vip+" and "+l7VIP+" on tunl0", func() bool {
			out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
			return strings.Contains(string(out), vip+"/32") && strings.Contains(string(out), l7VIP+"/32")
		})
	}
	t.Logf("VIPs bound on both gateways after %s", since(created))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := d.bird.WaitRoutes(ctx, pool, 2*time.Minute, func(rs []birdlab.Route) bool {
		return len(rs) == 1 && rs[0].NextHop == "198.18.1.2"
	}); err != nil {
		t.Fatalf("the router learns %s from the director: %v", pool, err)
	}
	t.Logf("route to %s in BIRD after %s", pool, since(created))
	if out, _ := d.bird.Birdc(ctx, "show", "protocols", "all", "director"); !strings.Contains(strings.Join(strings.Fields(out), " "), "Neighbor ID: 198.18.1.2") {
		t.Errorf("BIRD does not see router ID 198.18.1.2 (--router-id) for the director:\n%s", out)
	}

	// Traffic: new connections from the client, spread by Maglev over the
	// source ports; each gateway answers directly.
	waitFor(t, time.Minute, "the client reaches "+target, func() bool {
		_, err := get(d.client, target)
		return err == nil
	})
	t.Logf("first answer through the VIP %s after the Service was created", since(created))
	served := countAnswers(t, d, target, 30)
	t.Logf("%s, 30 new connections: %v", target, served)
	for _, gw := range d.gateways {
		if served[gw.Name+"/l4"] == 0 {
			t.Errorf("gateway %s answered none of 30 connections to %s (%v): Maglev should use both", gw.Name, target, served)
		}
	}
	// The kernel folds its per-CPU counters in every two seconds.
	var in, out int
	waitFor(t, 30*time.Second, "IPVS counts the requests to "+target, func() bool {
		in, out = ipvsPackets(t, d.director, target)
		return in > 0
	})
	if out != 0 {
		t.Errorf("IPVS counters of %s: InPkts %d OutPkts %d; want requests in and no replies through the director (DSR)", target, in, out)
	}
	// The L7 Service's VIP:80 lands on the listener bound on that VIP:80 of
	// the gateways, and only there.
	served = countAnswers(t, d, l7Target, 20)
	t.Logf("%s, 20 new connections: %v", l7Target, served)
	for name, n := range served {
		if !strings.HasSuffix(name, "/l7") {
			t.Errorf("%d connections to the L7 Service's %s answered by %s, not the L7 listener", n, l7Target, name)
		}
	}

	apiServerOutage(t, c, d, relays, target)

	// Drift: an IPVS service deleted behind the director's back comes back
	// at the next resync, with no API event to trigger it.
	d.director.Run(t, "ipvsadm", "-D", "-t", target)
	deleted := time.Now()
	waitFor(t, time.Minute, "the director restores IPVS service "+target, func() bool {
		out, _ := d.director.Cmd("ipvsadm", "-Ln", "-t", target).CombinedOutput()
		return strings.Contains(string(out), d.gatewayAddr[0]+":80") && strings.Contains(string(out), d.gatewayAddr[1]+":80")
	})
	t.Logf("IPVS service %s deleted behind the director's back: restored %s later (resyncInterval 5s)", target, since(deleted))

	// A gateway node turning NotReady is drained: weight 0, no new flows.
	c.setNodeReady(t, d.gateways[1].Name, false)
	waitFor(t, time.Minute, "the director sets "+d.gateways[1].Name+" to weight 0", func() bool {
		out, _ := d.director.Cmd("ipvsadm", "-Ln", "-t", target).CombinedOutput()
		return weightOf(string(out), d.gatewayAddr[1]+":80") == "0"
	})
	served = countAnswers(t, d, target, 20)
	if served[d.gateways[0].Name+"/l4"] != 20 {
		t.Errorf("with %s NotReady: %v; want all 20 new connections on %s", d.gateways[1].Name, served, d.gateways[0].Name)
	}
	c.setNodeReady(t, d.gateways[1].Name, true)

	// Deleting the Service releases the VIP everywhere; the other stays.
	if err := c.kc.CoreV1().Services("shop").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "shop/web is gone", func() bool {
		_, err := c.kc.CoreV1().Services("shop").Get(context.Background(), "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	waitFor(t, time.Minute, "the director removes IPVS service "+target, func() bool {
		out, err := d.director.Cmd("ipvsadm", "-Ln", "-t", target).CombinedOutput()
		return err != nil && !strings.Contains(string(out), d.gatewayAddr[0])
	})
	for _, gw := range d.gateways {
		waitFor(t, time.Minute, gw.Name+" unbinds "+vip, func() bool {
			out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
			return !strings.Contains(string(out), vip+"/32")
		})
	}
	if body, err := get(d.client, target); err == nil {
		t.Errorf("the deleted Service's VIP still answers: %q", body)
	}
	if _, err := get(d.client, l7Target); err != nil {
		t.Errorf("the other Service's VIP %s stopped answering after shop/web was deleted: %v", l7Target, err)
	}
}

// apiServerOutage cuts the director and both gateways off the API server
// for 20 s. Meanwhile a Service is created (the ipam controller still
// reaches the API server): nothing is withdrawn or reprogrammed, the VIP
// keeps answering and the route stays. Once the API server is back, the
// new Service is served.
func apiServerOutage(t *testing.T, c *cluster, d *dc, relays []*apiRelay, target string) {
	t.Helper()
	ipvsBefore := ipvsConfig(t, d.director)
	tunnel := func(gw *topo.Node) string { return gw.Run(t, "ip", "-br", "addr", "show", "dev", "tunl0") }
	var tunnelsBefore []string
	for _, gw := range d.gateways {
		tunnelsBefore = append(tunnelsBefore, tunnel(gw))
	}
	for _, r := range relays {
		r.Cut()
	}
	cut := time.Now()
	c.createService(t, "shop", "late", nil)
	lateVIP := c.waitVIP(t, "shop", "late", cut)
	ctx := context.Background()
	for checks := 0; time.Since(cut) < 20*time.Second; checks++ {
		if body, err := get(d.client, target); err != nil {
			t.Fatalf("API server unreachable for %s: %s stopped answering: %v", since(cut), target, err)
		} else if checks == 0 {
			t.Logf("API server unreachable: %s still answers (%s)", target, body)
		}
		if now := ipvsConfig(t, d.director); now != ipvsBefore {
			t.Fatalf("API server unreachable for %s: the director changed IPVS:\nbefore:\n%s\nnow:\n%s", since(cut), ipvsBefore, now)
		}
		for i, gw := range d.gateways {
			if now := tunnel(gw); now != tunnelsBefore[i] {
				t.Fatalf("API server unreachable for %s: %s changed tunl0: %q -> %q", since(cut), gw.Name, tunnelsBefore[i], now)
			}
		}
		if rs, err := d.bird.Routes(ctx, pool); err != nil || len(rs) != 1 {
			t.Fatalf("API server unreachable for %s: the router's routes to %s: %v %v", since(cut), pool, rs, err)
		}
		time.Sleep(time.Second)
	}
	for _, r := range relays {
		r.Restore()
	}
	back := time.Now()
	late := net.JoinHostPort(lateVIP, "80")
	for _, gw := range d.gateways {
		serveWhoAmI(t, gw, late, "l4") // its backend, bound on its VIP:80 like the others
	}
	waitFor(t, 2*time.Minute, "the director serves "+late+" once the API server is back", func() bool {
		out, _ := d.director.Cmd("ipvsadm", "-Ln", "-t", late).CombinedOutput()
		return strings.Contains(string(out), d.gatewayAddr[0]+":80")
	})
	waitFor(t, 2*time.Minute, "the client reaches "+late, func() bool {
		_, err := get(d.client, late)
		return err == nil
	})
	t.Logf("API server back: %s created during the outage answers %s later", late, since(back))
}

// ipvsConfig is `ipvsadm -Ln` without the connection counters: the
// services, their schedulers and each real server's forwarding and weight.
func ipvsConfig(t *testing.T, n *topo.Node) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(n.Run(t, "ipvsadm", "-Ln"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "->" {
			f = f[:4]
		}
		b.WriteString(strings.Join(f, " ") + "\n")
	}
	return b.String()
}

// get fetches http://target/ from node n on a new connection.
func get(n *topo.Node, target string) (string, error) {
	hc := n.HTTPClient()
	hc.Timeout = 5 * time.Second
	if tr, ok := hc.Transport.(*http.Transport); ok {
		tr.DisableKeepAlives = true
	}
	resp, err := hc.Get("http://" + target + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// countAnswers makes n requests on new connections from the client and
// counts the answering gateways; each answer must name the client's own
// address (no SNAT anywhere on the path).
func countAnswers(t *testing.T, d *dc, target string, n int) map[string]int {
	t.Helper()
	served := map[string]int{}
	for i := range n {
		body, err := get(d.client, target)
		if err != nil {
			t.Fatalf("request %d to %s: %v", i, target, err)
		}
		name, remote, _ := strings.Cut(body, " ")
		if host, _, _ := net.SplitHostPort(remote); host != "198.18.0.2" {
			t.Errorf("gateway %s saw the request from %q; want the client's address 198.18.0.2", name, remote)
		}
		served[name]++
	}
	return served
}

// ipvsPackets reads the InPkts and OutPkts counters of one IPVS service.
func ipvsPackets(t *testing.T, n *topo.Node, target string) (in, out int) {
	t.Helper()
	txt := n.Run(t, "ipvsadm", "-Ln", "--stats", "--exact", "-t", target)
	for _, line := range strings.Split(txt, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[0] == "TCP" && f[1] == target {
			in, _ = strconv.Atoi(f[3])
			out, _ = strconv.Atoi(f[4])
			return in, out
		}
	}
	t.Fatalf("no counters for %s in:\n%s", target, txt)
	return 0, 0
}

// weightOf finds the weight of a real server in `ipvsadm -Ln` output.
func weightOf(ipvsadm, rs string) string {
	for _, line := range strings.Split(ipvsadm, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "->" && f[1] == rs {
			return f[3]
		}
	}
	return ""
}

func prefixContains(t *testing.T, cidr, ip string) bool {
	t.Helper()
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		t.Fatal(err)
	}
	return n.Contains(net.ParseIP(ip))
}

// startLogged runs a binary in the VM's root namespace until the end of
// the test, its output in a file logged when the test fails.
func startLogged(t *testing.T, bin, dir, name string, args ...string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := os.StartProcess(bin, append([]string{bin}, args...), &os.ProcAttr{Files: []*os.File{nil, logf, logf}})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = p.Kill()
		_, _ = p.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log:\n%s", name, b)
		}
	})
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	poll.Until(t, within, what, ok)
}

func since(t0 time.Time) time.Duration { return time.Since(t0).Round(10 * time.Millisecond) }
