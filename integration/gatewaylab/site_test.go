package gatewaylab

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/internal/poll"
)

// TestSiteThroughEnvoyOnANode serves the site from one gateway node with
// the real Envoy as the manifest runs it (uid 101, CAP_NET_BIND_SERVICE
// only, binding VIP:443 and VIP:80 itself), without the L4 tier (the VIP
// is a local address of the gateway node, routed to it by a router;
// integration/director's TestMissionThroughEnvoy runs the whole path in
// the lab VM). A client in its own node gets every route from the
// backend of the right upstream on the backend nodes, over TLS verified
// for the host; :80 redirects to https; a host without a certificate
// gets no TLS session; a backend stopped is left out by Envoy's active
// check within the configured time.
func TestSiteThroughEnvoyOnANode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (network namespaces, the manifest's user); CI runs as root")
	}
	const vip = "203.0.113.10"
	lab := topo.New(t)
	router, client, gw := lab.Node("router"), lab.Node("client"), lab.Node("gw")
	router.Sysctl(t, "net.ipv4.ip_forward", "1")
	lab.Link(client, router, "198.18.0.2/24", "198.18.0.1/24")
	client.AddRoute(t, "default", "198.18.0.1")
	lab.Link(gw, router, "198.18.11.2/24", "198.18.11.1/24")
	gw.AddRoute(t, "default", "198.18.11.1")
	gw.AddAddr(t, "lo", vip+"/32")
	router.AddRoute(t, vip+"/32", "198.18.11.2")
	var apps []*topo.Node
	var appAddrs []string
	for i, a := range []string{"198.18.21", "198.18.22"} {
		n := lab.Node("app" + string(rune('1'+i)))
		lab.Link(n, router, a+".2/24", a+".1/24")
		n.AddRoute(t, "default", a+".1")
		apps, appAddrs = append(apps, n), append(appAddrs, a+".2")
	}
	ca := tlstest.NewCA(t)
	site := Site{VIP: vip, BackendNodes: appAddrs, CA: ca}
	backends := site.StartBackends(t, apps)
	g := StartGateways(t, []*topo.Node{gw}, []string{"198.18.11.2"}, site.Write(t))[0]
	ctx := context.Background()

	https := Client(client, vip+":443", ca, false)
	seen := map[string]bool{}
	for range 3 {
		for _, r := range Routes() {
			a, err := Get(ctx, https, r)
			if err != nil {
				t.Fatal(err)
			}
			if a.Gateway != "198.18.11.2" {
				t.Errorf("%s%s reached %s from %s, want the gateway node's address", r.Host, r.Path, a.Backend, a.Gateway)
			}
			seen[a.Backend] = true
		}
	}
	for _, b := range backends {
		if !seen[b.Name()] {
			t.Errorf("backend %s answered nothing (seen %v): every upstream has an endpoint on each backend node", b.Name(), seen)
		}
	}
	if err := Redirected(ctx, Client(client, vip+":80", ca, false), ShopHost, "/cart?x=1"); err != nil {
		t.Error(err)
	}
	if _, err := Get(ctx, https, Route{"other.example.com", "/", "web"}); err == nil || !strings.Contains(err.Error(), "tls") && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
		t.Errorf("a host with no certificate on the listener: %v, want no TLS session", err)
	}

	api2 := backends[4] // api@app2
	api2.Stop()
	stopped := time.Now()
	poll.Explained(t, 30*time.Second, "Envoy leaves "+api2.Name()+" out", func() (bool, string) {
		f, err := HealthFlags(ctx, g, "shop/api", api2.Addr)
		return err == nil && Excluded(f), f + errString(err)
	})
	took := time.Since(stopped)
	t.Logf("Envoy left %s out %v after it stopped (check: %+v, bound %v)", api2.Name(), took.Round(time.Millisecond), site.APICheck(), site.APICheck().DetectWithin())
	if took > site.APICheck().DetectWithin()+2*time.Second {
		t.Errorf("%s left out after %v, want within %v (+2s)", api2.Name(), took, site.APICheck().DetectWithin())
	}
	for range 10 {
		a, err := Get(ctx, https, Route{ShopHost, "/api/x", "api"})
		if err != nil {
			t.Fatal(err)
		}
		if a.Backend != "api@app1" {
			t.Errorf("/api answered by %s after api@app2 stopped", a.Backend)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}
