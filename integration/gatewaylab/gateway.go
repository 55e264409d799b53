package gatewaylab

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/integration/topo"
)

// ReadyWithin bounds Envoy's start: its first listeners and clusters
// from l7, with the site's first health checks, on the lab VM's emulated
// CPUs.
const ReadyWithin = 3 * time.Minute

// StartGateways runs, on each node, l7 serve (group edge, the DSL in
// config) and the real Envoy as deploy/envoy runs them: as the
// manifest's user, Envoy with CAP_NET_BIND_SERVICE as its only capability
// binding VIP:80 and VIP:443 itself, the read-only stats listener on the
// node's address hostIPs[i]:9902 (what the directors probe). It waits
// until every Envoy is ready; each gateway stops at the end of t.
func StartGateways(t topo.T, nodes []*topo.Node, hostIPs []string, config string) []*envoyproc.Gateway {
	t.Helper()
	gws := make([]*envoyproc.Gateway, len(nodes))
	for i, n := range nodes {
		dir, err := os.MkdirTemp("", "gw")
		if err != nil {
			t.Fatalf("gatewaylab: %v", err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		g, err := envoyproc.Start(envoyproc.Options{
			Group: "edge", Dir: dir, Serve: []string{"--config=" + config},
			HostIP: hostIPs[i], Node: n.Name, AsManifestUser: true, Command: n.Cmd,
		})
		if err != nil {
			t.Fatalf("gatewaylab: gateway on %s: %v", n.Name, err)
		}
		gws[i] = g
		t.Cleanup(func() {
			g.Stop()
			if f, ok := t.(interface{ Failed() bool }); ok && f.Failed() {
				t.Logf("--- %s envoy log (end):\n%s\n--- %s l7 log (end):\n%s", n.Name, g.LogTail("envoy", 4000), n.Name, g.LogTail("l7", 4000))
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), ReadyWithin)
	defer cancel()
	for i, g := range gws {
		if err := g.WaitReady(ctx); err != nil {
			t.Fatalf("gatewaylab: gateway on %s: %v", nodes[i].Name, err)
		}
	}
	return gws
}

// Client is an HTTP client in node that reaches addr (VIP:443 or VIP:80)
// whatever host its URLs name, and verifies the server's certificate for
// that host (SNI) against ca. A new connection, so a new flow through the
// L4 tier, for every request unless keepAlive. Redirects are returned,
// not followed.
func Client(node *topo.Node, addr string, ca *tlstest.CA, keepAlive bool) *http.Client {
	return envoyproc.ClientVia(node.DialContext, addr, &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}, keepAlive)
}
