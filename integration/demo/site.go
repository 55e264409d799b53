package demo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/integration/gatewaylab"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/integration/topo"
)

// The demo's addresses: links from 198.18.0.0/15 (benchmarking range) and the
// VIP from TEST-NET-3, so nothing here can leak anywhere real.
const (
	vip      = "203.0.113.10"
	vipRange = "203.0.113.0/24"
)

type site struct {
	lab                  *topo.Lab
	client, router       *topo.Node
	directors, gateways  []*topo.Node
	apps                 []*topo.Node // the backend nodes
	directorAddr, gwAddr []string
	appAddr              []string
	routerAddr           []string // the router's address on each director's link
	tlb                  []*exec.Cmd
	envoys               []*envoyproc.Gateway
	l7                   gatewaylab.Site
	bird                 *birdlab.Router
	tmp                  string
}

// directorConfig is a director's file: IPVS mh for VIP:443 and VIP:80
// over the gateways, BGP to the router, and each gateway's health read
// from its Envoy's stats listener (:9902/ready, 503 once Envoy drains).
func directorConfig(runtimeDir, addr, router string, gateways []string) string {
	var b strings.Builder
	// The obs listener on the director's address, for the console.
	fmt.Fprintf(&b, "director:\n  metricsAddress: %s:9100\n  runtimeDir: %s\n  vipRanges: [%s]\n  drainPeriod: 2s\n", addr, runtimeDir, vipRange)
	fmt.Fprintf(&b, "bgp:\n  localASN: 64512\n  routerID: %s\n  allowedPrefixes: [%s]\n  peers:\n    - {address: %s, asn: 64500, localAddress: %s}\n",
		addr, vipRange, router, addr)
	b.WriteString("health:\n  kind: http\n  port: 9902\n  path: /ready\n  interval: 1s\n  timeout: 1s\n")
	b.WriteString("services:\n")
	for _, port := range []int{443, 80} {
		fmt.Fprintf(&b, "  - vip: %s\n    port: %d\n    protocol: tcp\n    scheduler: mh\n    realServers:\n", vip, port)
		for _, g := range gateways {
			fmt.Fprintf(&b, "      - {address: %s, weight: 1}\n", g)
		}
	}
	return b.String()
}

func build(r *runner) *site {
	tmp, err := os.MkdirTemp("", "tlb-demo-")
	if err != nil {
		r.Fatalf("temp dir: %v", err)
	}
	r.Cleanup(func() { _ = os.RemoveAll(tmp) })
	if err := os.Mkdir(filepath.Join(tmp, "bird"), 0o755); err != nil {
		r.Fatalf("bird dir: %v", err)
	}
	lab := topo.New(r)
	s := &site{lab: lab, tmp: tmp, client: lab.Node("client"), router: lab.Node("router")}
	lab.Link(s.client, s.router, "198.18.0.2/24", "198.18.0.1/24")
	s.client.AddRoute(r, "default", "198.18.0.1")
	// The director-loss step must not pass because a stalled flow rehashed
	// itself onto the other director (net.core.txrehash, LAB.md).
	s.client.Sysctl(r, "net.core.txrehash", "0")
	for _, k := range []string{"net.ipv4.ip_forward", "net.ipv4.fib_multipath_hash_policy"} {
		s.router.Sysctl(r, k, "1")
	}
	for _, k := range []string{"net.ipv4.conf.all.rp_filter", "net.ipv4.conf.default.rp_filter"} {
		s.router.Sysctl(r, k, "0")
	}
	var nbrs []birdlab.Neighbor
	for i := 1; i <= 2; i++ {
		d := lab.Node(fmt.Sprintf("director%d", i))
		addr := fmt.Sprintf("198.18.%d.2", i)
		lab.Link(d, s.router, addr+"/24", fmt.Sprintf("198.18.%d.1/24", i))
		d.AddRoute(r, "default", fmt.Sprintf("198.18.%d.1", i))
		s.directors, s.directorAddr = append(s.directors, d), append(s.directorAddr, addr)
		s.routerAddr = append(s.routerAddr, fmt.Sprintf("198.18.%d.1", i))
		nbrs = append(nbrs, birdlab.Neighbor{Name: d.Name, Address: addr, ASN: 64512, Local: s.routerAddr[i-1]})

		for _, n := range []struct {
			kind  string
			net   int
			nodes *[]*topo.Node
			addrs *[]string
		}{{"gateway", 10 + i, &s.gateways, &s.gwAddr}, {"app", 20 + i, &s.apps, &s.appAddr}} {
			node := lab.Node(fmt.Sprintf("%s%d", n.kind, i))
			addr := fmt.Sprintf("198.18.%d.2", n.net)
			lab.Link(node, s.router, addr+"/24", fmt.Sprintf("198.18.%d.1/24", n.net))
			node.AddRoute(r, "default", fmt.Sprintf("198.18.%d.1", n.net))
			*n.nodes, *n.addrs = append(*n.nodes, node), append(*n.addrs, addr)
		}
	}
	bird, err := birdlab.StartRouter(context.Background(), s.router.NsName(), filepath.Join(tmp, "bird"),
		birdlab.RouterConfig{RouterID: "198.18.0.1", ASN: 64500, Neighbors: nbrs})
	if err != nil {
		r.Fatalf("start BIRD on the router: %v", err)
	}
	r.Cleanup(bird.Stop)
	s.bird = bird
	s.l7 = gatewaylab.Site{VIP: vip, BackendNodes: s.appAddr, CA: tlstest.NewCA(r)}
	return s
}
