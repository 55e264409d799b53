//go:build lab

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/tlbproject/tlb/integration/browser"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/integration/lab"
	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/internal/poll"
)

// TestConsoleInHeadlessChromium points `tlb console` at the real API
// server (with the ServiceAccount and RBAC of deploy/console) and at the
// director and both netds, and reads its page in Debian's headless
// Chromium, as a person would: the Service's VIP appears with its
// director, GTM health and the gateways that bind it; the director's BGP
// session turning down shows down; with the API server stopped the API
// panels carry the banner while the component panels still render. One
// browser (Debian's chromium-headless-shell, integration/browser) is
// started once and loads the page each time the test looks. The
// screenshots go to $TLB_LAB_ARTIFACTS when set, and otherwise into the
// test log as TLB-ARTIFACT lines (the VM's file system is gone when it
// powers off), which tools/lab-test.sh saves on the host as
// .cache/lab/artifacts/TestConsoleInHeadlessChromium/*.png.
func TestConsoleInHeadlessChromium(t *testing.T) {
	bin := os.Getenv("TLB_BIN_DIR")
	if bin == "" {
		t.Fatal("TLB_BIN_DIR is not set: run through tools/lab-test.sh")
	}
	chromium, err := browser.Find()
	if err != nil {
		t.Fatal(err)
	}
	c := startCluster(t)
	d := buildDC(t, 2)
	for _, n := range append([]*topo.Node{d.director}, d.gateways...) {
		reachAPIServer(t, n, c.hostport)
	}
	c.createPool(t, l4cluster, env, "lab-east-a", pool)
	for i, gw := range d.gateways {
		c.createGatewayNode(t, gw.Name, d.gatewayAddr[i])
	}
	consoleKC := c.consoleKubeconfig(t)
	tmp := t.TempDir()

	startLogged(t, filepath.Join(bin, "ipam"), tmp, "ipam", "--kubeconfig", c.ipamKC,
		"--metrics-addr", "127.0.0.1:9470", "--leader-election-namespace", "tlb-system", "--identity", "e2e")
	// netd with deploy/netd's file, but its obs listener on the gateway's
	// address, where the console (in the director's namespace) reaches it.
	netdFile, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "netd", "netd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	consoleArgs := []string{"console", "--listen", "127.0.0.1:8480", "--kubeconfig", consoleKC, "--timeout", "30s",
		"--director", d.director.Name + "=http://127.0.0.1:9100"}
	for i, gw := range d.gateways {
		cfg := filepath.Join(tmp, gw.Name+"-netd.yaml")
		addr := d.gatewayAddr[i] + ":9101"
		if err := os.WriteFile(cfg, []byte(strings.Replace(string(netdFile), "127.0.0.1:9101", addr, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		gw.Start(t, filepath.Join(bin, "netd"), "run", "--config", cfg, "--kubeconfig", c.netdKC, "--node", gw.Name)
		consoleArgs = append(consoleArgs, "--netd", gw.Name+"=http://"+addr)
	}
	dcfg := filepath.Join(tmp, "director.yaml")
	err = os.WriteFile(dcfg, fmt.Appendf(nil, `director:
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
health:
  kind: http
  port: 8081
  path: /healthz
  interval: 2s
  timeout: 1s
  rise: 1
  fall: 3
`, filepath.Join(tmp, "director-run"), pool), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	d.director.Start(t, filepath.Join(bin, "tlb"), "run", "--config", dcfg, "--kubeconfig", c.directorKC,
		"--l4-cluster", l4cluster, "--router-id", "198.18.1.2")
	d.director.Start(t, filepath.Join(bin, "tlb"), consoleArgs...)

	c.mustCreateNamespace(t, "shop")
	created := time.Now()
	c.createService(t, "shop", "web", nil)
	vip := c.waitVIP(t, "shop", "web", created)
	for i, gw := range d.gateways {
		serveWhoAmI(t, gw, vip+":80", "l4")
		// The director's HTTP health check (any path answers 200).
		serveWhoAmI(t, gw, d.gatewayAddr[i]+":8081", "health")
	}

	b := startBrowser(t, d.director, chromium)
	const console = "http://127.0.0.1:8480/"
	// The VIP with its Service, one director whose GTM answer is up and
	// which announces it, bound on both gateways; the director's session
	// established and both real servers passing its health check.
	b.waitPage(console, "the console shows "+vip+" served, healthy and announced", []string{
		`<a href="/vip/` + vip + `">` + vip + `</a>`,
		"<td>shop/web </td>",
		`<td>1 (<span class="up">1</span>/0)</td>`,
		"<td>director </td>",
		"<td>gateway1 gateway2 </td>",
		`<td>198.18.1.1</td><td><span class="up">established</span></td>`,
		rsUp("198.18.11.2"),
		rsUp("198.18.12.2"),
	}, []string{`class="banner"`})
	b.screenshot("console.png")

	// The director's BGP session goes down (the router drops its BGP
	// packets; hold time 3 s): the console shows it down and the director
	// no longer announcing.
	cut := filepath.Join(tmp, "bgp-cut.nft")
	if err := os.WriteFile(cut, []byte(`table inet bgpcut {
	chain input {
		type filter hook input priority 0; policy accept;
		ip saddr 198.18.1.2 tcp dport 179 drop
		ip saddr 198.18.1.2 tcp sport 179 drop
	}
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	d.router.Run(t, "nft", "-f", cut)
	b.waitPage(console, "the console shows the director's BGP session down", []string{
		`<td>198.18.1.1</td><td><span class="down">down</span></td>`,
	}, []string{"<td>director </td>"})
	b.screenshot("console-session-down.png")

	// The API server stops: every panel built from it carries the banner,
	// the components' panels still render what the director and netds say.
	c.server.Stop()
	b.waitPage(console, "the console shows the API banner and still the components", []string{
		`<div class="banner" data-source="api">API server unreachable`,
		`data-role="director" data-name="director"`,
		`<td>198.18.1.1</td><td><span class="down">down</span></td>`,
		`data-role="netd" data-name="gateway1"`,
		`data-role="netd" data-name="gateway2"`,
	}, []string{`data-source="director director"`, `data-source="netd gateway1"`})
	b.screenshot("console-api-down.png")
}

// consoleKubeconfig applies deploy/console's RBAC and returns the
// kubeconfig of its ServiceAccount once it may list Services.
func (c *cluster) consoleKubeconfig(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs, err := apiserver.ReadManifests(filepath.Join(repoRoot(t), "deploy", "console", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.server.CreateAll(ctx, objs); err != nil {
		t.Fatalf("apply deploy/console/rbac.yaml: %v", err)
	}
	kc, err := c.server.ServiceAccountKubeconfig(ctx, "tlb-system", "tlb-console")
	if err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, kc, "tlb-console", authorizationv1.ResourceAttributes{Verb: "list", Resource: "services"})
	return kc
}

// page is one headless Chromium, started once inside a node (as root,
// hence no sandbox) and driven over the DevTools protocol, that loads the
// console's page as often as a test needs. Each Chromium start costs tens
// of seconds under the VM's emulated CPU, minutes when the host is busy,
// so the browser is started once rather than once per look.
type page struct {
	t *testing.T
	b *browser.Browser
}

func startBrowser(t *testing.T, node *topo.Node, bin string) *page {
	t.Helper()
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx, browser.Options{Binary: bin, Dir: t.TempDir(), Command: node.Cmd, Width: 1280, Height: 2000})
	if err != nil {
		t.Fatalf("start headless chromium in node %s: %v", node.Name, err)
	}
	t.Cleanup(b.Close)
	t.Logf("headless chromium ready in node %s after %s", node.Name, time.Since(begin).Round(100*time.Millisecond))
	return &page{t: t, b: b}
}

// rsUp is a pattern for the DOM of a real server at addr (with or without
// the health check's port) shown up.
func rsUp(addr string) string {
	return "re:<td>" + regexp.QuoteMeta(addr) + `(:\d+)?</td><td><span class="up">up</span></td>`
}

// has reports whether dom contains w: a regular expression when w starts
// with "re:", a literal otherwise.
func has(dom, w string) bool {
	if p, ok := strings.CutPrefix(w, "re:"); ok {
		return regexp.MustCompile(p).MatchString(dom)
	}
	return strings.Contains(dom, w)
}

// waitPage loads url until its DOM has every string of want and none of
// deny (see has); the page stays loaded for a screenshot.
func (p *page) waitPage(url, what string, want, deny []string) {
	p.t.Helper()
	loads, begin := 0, time.Now()
	poll.Explained(p.t, 3*time.Minute, what, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		loads++
		dom, err := p.b.Load(ctx, url)
		if err != nil {
			return false, err.Error()
		}
		for _, w := range want {
			if !has(dom, w) {
				return false, fmt.Sprintf("the page lacks %q:\n%s", w, dom)
			}
		}
		for _, n := range deny {
			if has(dom, n) {
				return false, fmt.Sprintf("the page has %q:\n%s", n, dom)
			}
		}
		return true, ""
	})
	p.t.Logf("%s: after %d loads, %s", what, loads, time.Since(begin).Round(100*time.Millisecond))
}

// screenshot saves a screenshot of the page as last loaded (1280x2000) as
// name in $TLB_LAB_ARTIFACTS, or, when that is not set, logs it as
// artifact lines (lab.ArtifactLines: base64 in chunks) that the host side
// of the lab (labrun -artifacts) saves as DIR/TEST/NAME.
func (p *page) screenshot(name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	png, err := p.b.Screenshot(ctx)
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if dir := os.Getenv("TLB_LAB_ARTIFACTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			p.t.Fatal(err)
		}
		p.t.Logf("screenshot %s", filepath.Join(dir, name))
		return
	}
	lines, err := lab.ArtifactLines(p.t.Name(), name, png)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, l := range lines {
		p.t.Log(l)
	}
}
