//go:build lab

package director_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/flowprobe"
	"github.com/tlbproject/tlb/integration/topo"
)

const (
	// vip6 is the IPv6 VIP of the dual-stack Service, in vip6Subnet.
	vip6       = "2001:db8:cafe::10"
	vip6Subnet = "2001:db8:cafe::/64"
	// client6 is the client's IPv6 address.
	client6 = "fd00::2"
)

// addIPv6 gives the data center its IPv6 half on the same links: client
// fd00::2, router fd00::1 (forwarding, ECMP on the 5-tuple); director k
// fd00:1:k::2 and gateway k fd00:10:k::2, each behind the router.
func (d *dc) addIPv6(t *testing.T) {
	t.Helper()
	d.router.Sysctl(t, "net.ipv6.conf.all.forwarding", "1")
	d.router.Sysctl(t, "net.ipv6.fib_multipath_hash_policy", "1")
	link6 := func(n *topo.Node, net string) string {
		addr6(t, n, "router", net+"::2/64")
		addr6(t, d.router, n.Name, net+"::1/64")
		n.Run(t, "ip", "-6", "route", "replace", "default", "via", net+"::1")
		return net + "::2"
	}
	link6(d.client, "fd00")
	for k := range d.directors {
		d.directorAddr6 = append(d.directorAddr6, link6(d.directors[k], fmt.Sprintf("fd00:1:%d", k+1)))
		d.gatewayAddr6 = append(d.gatewayAddr6, link6(d.gateways[k], fmt.Sprintf("fd00:10:%d", k+1)))
	}
}

// addr6 adds an IPv6 address without duplicate address detection, so it
// is usable at once.
func addr6(t *testing.T, n *topo.Node, ifname, cidr string) {
	t.Helper()
	n.Run(t, "ip", "-6", "addr", "add", cidr, "dev", ifname, "nodad")
}

// gatewaysOf returns the gateways' addresses of v's family: an IPv6
// VIP is tunnelled to their IPv6 addresses.
func (d *dc) gatewaysOf(v string) []string {
	if strings.Contains(v, ":") {
		return d.gatewayAddr6
	}
	return d.gatewayAddr
}

// bound reports whether netd bound VIP v on gw's tunnel of its family
// (tunl0 /32, ip6tnl0 /128).
func bound(gw *topo.Node, v string) bool {
	dev, suffix := "tunl0", "/32"
	if strings.Contains(v, ":") {
		dev, suffix = "ip6tnl0", "/128"
	}
	out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", dev).CombinedOutput()
	return strings.Contains(string(out), v+suffix)
}

// TestDualStackServiceThroughDirectors is issue 26 item 1 in the lab, the
// IPv4 proofs of TestAnnounceOnReadyThenSurviveKill repeated on a
// dual-stack Service (203.0.113.10 and 2001:db8:cafe::10, port 80) with
// the real parts: two directors running `tlb run` (IPVS mh, tunnel mode:
// IPIP to the gateways' IPv4 addresses, IPv6-in-IPv6 to their IPv6 ones;
// BGP to BIRD, MP-BGP ipv6-unicast with nextHopIPv6; HTTP health checks
// of both families), two gateways running `netd run` (tunl0 and ip6tnl0),
// BIRD installing both ranges in the router's kernel as ECMP routes.
//  1. BIRD learns the IPv6 range from each director with the director's
//     IPv6 address as next hop (and the IPv4 range as before);
//  2. new flows of each family spread over both directors and both
//     gateways, and the directors forward no reply (direct return);
//  3. the two directors agree on every probe flow of each family;
//  4. director1 blackholed and SIGKILLed while streams of both families
//     run: BIRD drops it for both ranges by the hold timer, and every
//     stream continues through director2 to the same gateway.
func TestDualStackServiceThroughDirectors(t *testing.T) {
	ctx := context.Background()
	d := buildDCWith(t, dcOptions{ipv6: true})
	began := time.Now()
	d.startBoth(t)
	_, took, err := d.bird.WaitRoutes(ctx, vip6Subnet, 60*time.Second, hasNextHops(d.directorAddr6...))
	if err != nil {
		d.diagnose(t)
		t.Fatalf("both directors' IPv6 next hops for %s in BIRD: %v", vip6Subnet, err)
	}
	t.Logf("%s via %v in BIRD %v after the directors started (%v after the IPv4 range)", vip6Subnet, d.directorAddr6, time.Since(began).Round(time.Millisecond), took.Round(time.Millisecond))
	out, _ := d.bird.Birdc(ctx, "show", "route", vip6Subnet, "all")
	t.Logf("birdc show route %s all:\n%s", vip6Subnet, out)
	for _, a := range d.directorAddr6 {
		if !strings.Contains(out, "BGP.next_hop: "+a) {
			t.Errorf("BIRD's routes for %s carry no BGP.next_hop %s", vip6Subnet, a)
		}
	}
	d.waitKernelNextHopsOf(t, vip6Subnet, 2)
	kernel, _ := d.router.Cmd("ip", "-6", "route", "show", vip6Subnet).CombinedOutput()
	t.Logf("router's kernel: %s", kernel)

	services := []string{vip + ":80", "[" + vip6 + "]:80"}
	for _, svc := range services {
		d.newFlowsOf(t, svc, 60)
	}
	for _, svc := range services {
		d.directorsAgree(t, svc, 300)
	}
	d.killDirectorUnderStreams(t, services, 30)
}

// newFlowsOf opens n short connections to service and checks that they
// spread over both directors and both gateways, and that neither director
// forwarded a reply.
func (d *dc) newFlowsOf(t *testing.T, service string, n int) {
	t.Helper()
	before := make([]int64, len(d.accepted))
	for i, a := range d.accepted {
		before[i] = a.Load()
	}
	for i := range n {
		if err := d.requestTo(service); err != nil {
			d.diagnose(t)
			t.Fatalf("request %d to %s: %v", i, service, err)
		}
	}
	perDirector := []int{d.ipvsConnsTo(0, service, "", nil), d.ipvsConnsTo(1, service, "", nil)}
	perGateway := make([]int64, len(d.accepted))
	for i, a := range d.accepted {
		perGateway[i] = a.Load() - before[i]
	}
	t.Logf("%d short connections to %s: IPVS entries per director %v, connections per gateway %v", n, service, perDirector, perGateway)
	if perDirector[0] == 0 || perDirector[1] == 0 || perGateway[0] == 0 || perGateway[1] == 0 {
		t.Errorf("%s: new flows did not spread over both directors (%v) and both gateways (%v)", service, perDirector, perGateway)
	}
	for i := range d.directors {
		in, out := d.ipvsPackets(i, service)
		t.Logf("director%d IPVS %s: InPkts %d OutPkts %d", i+1, service, in, out)
		if out != 0 {
			t.Errorf("director%d forwarded %d reply packets of %s: replies must go straight from the gateways", i+1, out, service)
		}
	}
}

// directorsAgree pins the router's route to service's VIP to each
// director in turn, sends the same n probe flows (one SYN per client
// port) through it, and checks both directors chose the same gateway for
// every flow, and both gateways got flows.
func (d *dc) directorsAgree(t *testing.T, service string, n int) {
	t.Helper()
	dst := netip.MustParseAddrPort(service)
	src, host, via := netip.MustParseAddr("198.18.0.2"), dst.Addr().String()+"/32", d.directorAddr
	if dst.Addr().Is6() {
		src, host, via = netip.MustParseAddr(client6), dst.Addr().String()+"/128", d.directorAddr6
	}
	ip := ipFamily(host)
	ports := flowprobe.PortRange(20000, n)
	var chose []map[int]string
	for k := range d.directors {
		// A host route beside BIRD's range: BIRD leaves it alone.
		d.router.Run(t, "ip", ip, "route", "replace", host, "via", via[k])
		chose = append(chose, flowprobe.Flows(t, d.client, d.directors[k], src, dst, ports))
	}
	d.router.Run(t, "ip", ip, "route", "del", host)
	off := flowprobe.Disagreements(chose[0], chose[1])
	t.Logf("%s: %d probe flows, spread over gateways %v; director1 and director2 disagree on %d", service, n, flowprobe.Spread(chose[0]), off)
	t.Logf("BENCH dualstack_flows_disagree_%s %d count", family(dst.Addr()), off)
	if off != 0 {
		t.Errorf("%s: the directors disagree on %d of %d flows", service, off, n)
	}
	if len(flowprobe.Spread(chose[0])) != len(d.gateways) {
		t.Errorf("%s: probe flows reached %d of %d gateways", service, len(flowprobe.Spread(chose[0])), len(d.gateways))
	}
}

// ipFamily is ip(8)'s family flag for an address or prefix.
func ipFamily(addr string) string {
	if strings.Contains(addr, ":") {
		return "-6"
	}
	return "-4"
}

func family(a netip.Addr) string {
	if a.Is4() {
		return "ipv4"
	}
	return "ipv6"
}

// killDirectorUnderStreams runs n streams to each service, spread over
// both directors, then director1 dies silently (blackholed, then tlb
// SIGKILLed): BIRD must drop it from both ranges by its hold timer, and
// every stream must go on.
func (d *dc) killDirectorUnderStreams(t *testing.T, services []string, n int) {
	t.Helper()
	ctx := context.Background()
	sctx, stop := context.WithCancel(ctx)
	var all []*stream
	var running []*sync.WaitGroup
	end := func() {
		stop()
		for _, wg := range running {
			wg.Wait()
		}
	}
	defer end()
	for _, svc := range services {
		ss, wg := d.openSpreadStreamsTo(sctx, t, svc, n, "kill")
		all, running = append(all, ss...), append(running, wg)
	}
	d.dropAllTraffic(t, 0, "dead")
	killAt := time.Now()
	if err := d.tlb[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ prefix, survivor string }{{vipSubnet, d.directorAddr[1]}, {vip6Subnet, d.directorAddr6[1]}} {
		if _, _, err := d.bird.WaitRoutes(ctx, r.prefix, 30*time.Second, hasNextHops(r.survivor)); err != nil {
			d.diagnose(t)
			t.Fatalf("BIRD never dropped the dead director from %s: %v", r.prefix, err)
		}
		detect := time.Since(killAt)
		t.Logf("BIRD routes %s via %s alone %v after the kill (hold time 3s)", r.prefix, r.survivor, detect.Round(time.Millisecond))
		if detect > 5*time.Second {
			t.Errorf("%s: dead director dropped after %v, want within the 3s hold time (+2s slack)", r.prefix, detect)
		}
	}
	var recovered time.Time
	waitUntil(t, 60*time.Second, "every stream of both families exchanged data after the kill", func() bool {
		if allProgressedSince(all, killAt) {
			recovered = time.Now()
			return true
		}
		return false
	})
	end()
	for i, svc := range services {
		k, first := broken(all[i*n : (i+1)*n])
		t.Logf("streams to %s: %d of %d held, %d broken (first error: %v)", svc, n-k, n, k, first)
		t.Logf("BENCH dualstack_streams_broken_%s %d count", family(netip.MustParseAddrPort(svc).Addr()), k)
		if k > 0 {
			t.Errorf("%d of %d streams to %s broke after the SIGKILL; first: %v", k, n, svc, first)
		}
	}
	t.Logf("all %d streams progressing again %v after the kill", len(all), recovered.Sub(killAt).Round(time.Millisecond))
}
