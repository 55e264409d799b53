//go:build lab

package l4

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/ipvs"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/integration/flowprobe"
	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/tlb/model"
)

// vip6 is the IPv6 VIP of the dual-stack labs.
var vip6 = netip.MustParseAddr("2001:db8:cafe::10")

// run6 runs "ip -6 args..." in node.
func run6(t *testing.T, node *topo.Node, args ...string) {
	t.Helper()
	node.Run(t, "ip", append([]string{"-6"}, args...)...)
}

// addAddr6 adds an IPv6 address without duplicate address detection, so
// it is usable at once.
func addAddr6(t *testing.T, node *topo.Node, ifname, cidr string) {
	t.Helper()
	run6(t, node, "addr", "add", cidr, "dev", ifname, "nodad")
}

// addIPv6 gives the dual-stack lab l its IPv6 half on the same links:
// client fd00::2, router fd00::1; director k fd00:1:k::2; gateway i
// fd00:10:i::2, each routed through the router; vip6 on every director's
// vip0 and routed by the router to the first director.
func (l *dsrLab) addIPv6(t *testing.T) []netip.Addr {
	t.Helper()
	l.router.Sysctl(t, "net/ipv6/conf/all/forwarding", "1")
	addAddr6(t, l.client, "router", "fd00::2/64")
	addAddr6(t, l.router, "client", "fd00::1/64")
	run6(t, l.client, "route", "replace", "default", "via", "fd00::1")
	for k, d := range l.directors {
		addAddr6(t, l.router, d.Name, fmt.Sprintf("fd00:1:%d::1/64", k+1))
		addAddr6(t, d, "router", fmt.Sprintf("fd00:1:%d::2/64", k+1))
		run6(t, d, "route", "replace", "default", "via", fmt.Sprintf("fd00:1:%d::1", k+1))
		addAddr6(t, d, "vip0", vip6.String()+"/128")
	}
	var gws []netip.Addr
	for i, g := range l.gateways {
		addAddr6(t, l.router, g.Name, fmt.Sprintf("fd00:10:%d::1/64", i+1))
		addAddr6(t, g, "router", fmt.Sprintf("fd00:10:%d::2/64", i+1))
		run6(t, g, "route", "replace", "default", "via", fmt.Sprintf("fd00:10:%d::1", i+1))
		gws = append(gws, netip.MustParseAddr(fmt.Sprintf("fd00:10:%d::2", i+1)))
	}
	run6(t, l.router, "route", "replace", vip6.String()+"/128", "via", "fd00:1:1::2")
	return gws
}

// boundVIPs6 lists the IPv6 addresses on ip6tnl0 that bear netd's mark
// (nodad and noprefixroute).
func boundVIPs6(t *testing.T, node *topo.Node) []netip.Addr {
	t.Helper()
	lk, err := node.Netlink().LinkByName("ip6tnl0")
	if err != nil {
		return nil
	}
	addrs, err := node.Netlink().AddrList(lk, netlink.FAMILY_V6)
	if err != nil {
		t.Fatalf("list ip6tnl0 addresses in %s: %v", node.Name, err)
	}
	var out []netip.Addr
	for _, a := range addrs {
		ip, _ := netip.AddrFromSlice(a.IP)
		ones, _ := a.Mask.Size()
		mark := unix.IFA_F_NODAD | unix.IFA_F_NOPREFIXROUTE
		if ones == 128 && a.Flags&mark == mark {
			out = append(out, ip)
		}
	}
	return out
}

// startDualNetd starts the real netd binary in node serving the IPv4 VIP
// and vip6 (mss auto, and the given lines under netd:), and waits until
// each is bound on its tunnel.
func startDualNetd(t *testing.T, node *topo.Node, settings string) *netdProc {
	t.Helper()
	p := &netdProc{node: node, config: t.TempDir() + "/netd.yaml", metrics: "127.0.0.1:9101"}
	writeFile(t, p.config, fmt.Sprintf("netd:\n  metricsAddress: %s\n  mss: auto\n%svips: [%s, '%s']\n", p.metrics, settings, vip, vip6))
	p.proc = startProc(t, node, "netd", "run", "--config", p.config, "--resync", "1s")
	waitFor(t, 60*time.Second, "netd binds both VIPs in "+node.Name, func() bool {
		return slices.Equal(boundVIPs(t, node), []netip.Addr{vip}) && slices.Equal(boundVIPs6(t, node), []netip.Addr{vip6})
	})
	return p
}

// serveHTTP6 runs, in each gateway, an HTTP server on [vip6]:80 answering
// with the gateway's name.
func (l *dsrLab) serveHTTP6(t *testing.T) {
	t.Helper()
	for _, g := range l.gateways {
		name := g.Name
		ln, err := g.Listen("tcp", netip.AddrPortFrom(vip6, 80).String())
		if err != nil {
			t.Fatalf("listen on the IPv6 VIP in %s: %v", name, err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, name) }),
			ReadHeaderTimeout: 30 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
}

// getFrom fetches / from addr through the client on a new connection and
// returns the answering gateway's name.
func getFrom(t *testing.T, client *topo.Node, addr netip.Addr) string {
	t.Helper()
	resp, err := client.HTTPClient().Get("http://" + netip.AddrPortFrom(addr, 80).String() + "/")
	if err != nil {
		t.Fatalf("GET %s: %v", addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer of %s: %v", addr, err)
	}
	return strings.TrimSpace(string(b))
}

// statsOf returns the counters of the IPVS service addr:port once traffic
// shows in them (the kernel folds its per-CPU counters every 2 s).
func statsOf(t *testing.T, h *ipvs.Handle, addr netip.Addr, port uint16) ipvs.SvcStats {
	t.Helper()
	var st ipvs.SvcStats
	waitFor(t, 10*time.Second, fmt.Sprintf("IPVS counters of %s", netip.AddrPortFrom(addr, port)), func() bool {
		svcs, err := h.GetServices()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range svcs {
			if a, ok := netip.AddrFromSlice(s.Address); ok && a.Unmap() == addr && s.Port == port {
				st = s.Stats
			}
		}
		return st.PacketsIn > 0
	})
	return st
}

// dualService is the desired state of a dual-stack Service: one IPVS
// service per VIP, each tunnelling to the gateways' addresses of its own
// family (IPIP for IPv4, IPv6-in-IPv6 for IPv6).
func dualService(gws4, gws6 []netip.Addr) model.Desired {
	var rs4, rs6 []model.RealServer
	for _, a := range gws4 {
		rs4 = append(rs4, model.RealServer{Addr: a, Weight: 1})
	}
	for _, a := range gws6 {
		rs6 = append(rs6, model.RealServer{Addr: a, Weight: 1})
	}
	return model.Desired{Services: []model.Service{
		{VIP: vip, Protocol: model.TCP, Port: 80, RealServers: rs4},
		{VIP: vip6, Protocol: model.TCP, Port: 80, RealServers: rs6},
	}}
}

// TestIPv6VIPThroughTwoGatewaysWithDirectReturn proves IPv6 VIPs end to
// end and a dual-stack Service: the real director package (through
// director.Kernel) programs an IPv6 IPVS service, mh, with the two
// gateways' IPv6 addresses as tunnel-mode real servers, beside the IPv4
// service of the same Service; the real netd binds the IPv6 VIP on
// ip6tnl0 with its mark and clamps it 40 bytes below the IPv4 VIP. Both
// gateways answer on both VIPs, and the director's IPv6 service forwards
// no reply packet (OutPkts 0): replies go straight to the client.
func TestIPv6VIPThroughTwoGatewaysWithDirectReturn(t *testing.T) {
	l := newDSRLab(t, 1, 2)
	gws6 := l.addIPv6(t)
	for _, g := range l.gateways {
		l.netd = append(l.netd, startDualNetd(t, g, ""))
	}
	for _, g := range l.gateways {
		waitFor(t, 30*time.Second, "netd clamps "+g.Name+" for both families", func() bool {
			out := g.Run(t, "nft", "list", "chain", "inet", "tlb_netd", "mss_clamp")
			return strings.Contains(out, "maxseg size set 1440") && strings.Contains(out, "maxseg size set 1400")
		})
	}
	l.serveHTTP(t)
	l.serveHTTP6(t)
	d, k := newKernelDirector(t, l.directors[0])
	reconcile(t, d, dualService(l.gwAddrs, gws6))
	t.Logf("director IPVS:\n%s", l.directors[0].Run(t, "ipvsadm", "-Ln"))
	if res := reconcile(t, d, dualService(l.gwAddrs, gws6)); res.Writes != 0 {
		t.Errorf("second reconcile of the dual-stack service wrote %d times, want 0 (the director reads its IPv6 real servers back)", res.Writes)
	}

	seen := map[netip.Addr]map[string]int{vip: {}, vip6: {}}
	for _, a := range []netip.Addr{vip6, vip} {
		waitFor(t, 60*time.Second, fmt.Sprintf("both gateways answer on %s", a), func() bool {
			seen[a][getFrom(t, l.client, a)]++
			return len(seen[a]) == 2
		})
	}
	st := statsOf(t, k.Handle, vip6, 80)
	t.Logf("answers per gateway: IPv6 VIP %v, IPv4 VIP %v; IPv6 service: IPVS in %d pkts, out %d pkts, %d connections",
		seen[vip6], seen[vip], st.PacketsIn, st.PacketsOut, st.Connections)
	if st.PacketsOut != 0 || st.BytesOut != 0 {
		t.Errorf("IPVS forwarded %d reply packets of the IPv6 VIP: replies went through the director", st.PacketsOut)
	}
}

// echoStreams serves, in each gateway, a line echo on [vip6]:7000 that
// prefixes every answer with the gateway's name.
func echoStreams(t *testing.T, gateways []*topo.Node) {
	t.Helper()
	for _, g := range gateways {
		name := g.Name
		ln, err := g.Listen("tcp", netip.AddrPortFrom(vip6, 7000).String())
		if err != nil {
			t.Fatalf("listen in %s: %v", name, err)
		}
		t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					r := bufio.NewReader(c)
					for {
						line, err := r.ReadString('\n')
						if err != nil {
							return
						}
						if _, err := fmt.Fprintf(c, "%s %s", name, line); err != nil {
							return
						}
					}
				}()
			}
		}()
	}
}

// stream is one long-lived connection to [vip6]:7000.
type stream struct {
	conn net.Conn
	r    *bufio.Reader
	gw   string
}

// ask sends word and returns the answering gateway, or an error when the
// stream is broken or silent for 20 s.
func (s *stream) ask(word string) (string, error) {
	_ = s.conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprintln(s.conn, word); err != nil {
		return "", err
	}
	line, err := s.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	gw, got, _ := strings.Cut(strings.TrimSpace(line), " ")
	if got != word {
		return "", fmt.Errorf("answer %q to %q", line, word)
	}
	return gw, nil
}

// TestIPv6StreamsSurviveADirectorLoss is the failover proof on the IPv6
// VIP: two directors behind the router's ECMP route (5-tuple hash, the
// client's flow hash fixed: see LAB.md on txrehash), programmed with the
// same gateways in different orders; 20 streams spread over both. One
// director is lost (its route removed, its IPVS flushed, its link down):
// the other, which never saw those streams' handshakes, sends every one to
// the same gateway (mh, sloppy TCP), so every stream keeps working.
func TestIPv6StreamsSurviveADirectorLoss(t *testing.T) {
	const streams = 20
	l := newDSRLab(t, 2, 2)
	gws6 := l.addIPv6(t)
	l.client.Sysctl(t, "net/core/txrehash", "0")
	l.router.Sysctl(t, "net/ipv6/fib_multipath_hash_policy", "1")
	run6(t, l.router, "route", "replace", vip6.String()+"/128",
		"nexthop", "via", "fd00:1:1::2", "dev", "dir1", "nexthop", "via", "fd00:1:2::2", "dev", "dir2")
	for _, g := range l.gateways {
		l.netd = append(l.netd, startDualNetd(t, g, ""))
	}
	echoStreams(t, l.gateways)
	reversed := slices.Clone(gws6)
	slices.Reverse(reversed)
	var handles []*ipvs.Handle
	for i, order := range [][]netip.Addr{gws6, reversed} {
		d, k := newKernelDirector(t, l.directors[i])
		reconcile(t, d, model.Desired{Services: []model.Service{{VIP: vip6, Protocol: model.TCP, Port: 7000,
			RealServers: []model.RealServer{{Addr: order[0], Weight: 1}, {Addr: order[1], Weight: 1}}}}})
		handles = append(handles, k.Handle)
	}

	var open []*stream
	for i := range streams {
		c, err := l.client.Dial("tcp", netip.AddrPortFrom(vip6, 7000).String())
		if err != nil {
			t.Fatalf("stream %d: dial: %v", i, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		s := &stream{conn: c, r: bufio.NewReader(c)}
		if s.gw, err = s.ask("hello"); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		open = append(open, s)
	}
	perDirector := make([]uint32, len(handles))
	for i, h := range handles {
		perDirector[i] = statsOf(t, h, vip6, 7000).Connections
	}
	perGateway := map[string]int{}
	for _, s := range open {
		perGateway[s.gw]++
	}
	t.Logf("%d streams: connections per director %v, streams per gateway %v", streams, perDirector, perGateway)
	if perDirector[0] == 0 || perDirector[1] == 0 {
		t.Fatalf("the router sent every stream to one director (%v): the loss below would prove nothing", perDirector)
	}

	// Lose director 1.
	run6(t, l.router, "route", "replace", vip6.String()+"/128", "via", "fd00:1:2::2", "dev", "dir2")
	l.directors[0].Run(t, "ipvsadm", "-C")
	l.directors[0].Run(t, "ip", "link", "set", "router", "down")

	survived := 0
	for i, s := range open {
		gw, err := s.ask("again")
		switch {
		case err != nil:
			t.Errorf("stream %d (on %s) broke after the director loss: %v", i, s.gw, err)
		case gw != s.gw:
			t.Errorf("stream %d moved from %s to %s", i, s.gw, gw)
		default:
			survived++
		}
	}
	t.Logf("after losing director 1: %d of %d streams survived", survived, streams)
}

// TestIPv6DirectorsAgreeOnFlowsAfterChurn is the flow-agreement proof of
// TestDirectorsAgreeOnFlowsAfterChurn on an IPv6 VIP: two directors given
// the same IPv6 real servers in different orders send the same flows to
// the same real servers, and still do after one of them sees churn while
// the other starts fresh with the final set.
func TestIPv6DirectorsAgreeOnFlowsAfterChurn(t *testing.T) {
	const flows = 500
	lab := topo.New(t)
	src := netip.MustParseAddr("fd00:50::2")
	var dirs, clients []*topo.Node
	for k := range 2 {
		d, c := lab.Node(fmt.Sprintf("pdir%d", k+1)), lab.Node(fmt.Sprintf("pcl%d", k+1))
		lab.Link(c, d, "", "")
		addAddr6(t, c, d.Name, src.String()+"/64")
		addAddr6(t, d, c.Name, "fd00:50::1/64")
		run6(t, c, "route", "add", vip6.String()+"/128", "via", "fd00:50::1")
		for _, args := range [][]string{
			{"link", "add", "vip0", "type", "dummy"},
			{"link", "set", "vip0", "up"},
			{"link", "add", "sink0", "type", "dummy"},
			{"link", "set", "sink0", "up"},
		} {
			d.Run(t, "ip", args...)
		}
		addAddr6(t, d, "vip0", vip6.String()+"/128")
		run6(t, d, "route", "add", "2001:db8:100::/64", "dev", "sink0")
		dirs, clients = append(dirs, d), append(clients, c)
	}
	rs := func(xs ...int) []netip.Addr {
		var out []netip.Addr
		for _, x := range xs {
			out = append(out, netip.MustParseAddr(fmt.Sprintf("2001:db8:100::%x", x)))
		}
		return out
	}
	service := func(addrs []netip.Addr) model.Desired {
		var r []model.RealServer
		for _, a := range addrs {
			r = append(r, model.RealServer{Addr: a, Weight: 1})
		}
		return model.Desired{Services: []model.Service{{VIP: vip6, Protocol: model.TCP, Port: 80, RealServers: r}}}
	}
	set := rs(10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
	shuffled := []netip.Addr{set[3], set[9], set[0], set[6], set[2], set[8], set[1], set[5], set[7], set[4]}
	reversed := slices.Clone(set)
	slices.Reverse(reversed)
	d1, _ := newKernelDirector(t, dirs[0])
	d2, _ := newKernelDirector(t, dirs[1])
	reconcile(t, d1, service(shuffled))
	reconcile(t, d2, service(reversed))

	ports := flowprobe.PortRange(20000, flows)
	f1, f2 := flowprobe.Flows(t, clients[0], dirs[0], src, netip.AddrPortFrom(vip6, 80), ports), flowprobe.Flows(t, clients[1], dirs[1], src, netip.AddrPortFrom(vip6, 80), ports)
	t.Logf("round 1: %d flows, spread over real servers %v; %d disagree", flows, flowprobe.Spread(f1), flowprobe.Disagreements(f1, f2))
	if n := flowprobe.Disagreements(f1, f2); n != 0 {
		t.Fatalf("round 1: directors disagree on %d of %d flows", n, flows)
	}
	if len(flowprobe.Spread(f1)) != len(set) {
		t.Fatalf("round 1: flows reached %d of %d real servers", len(flowprobe.Spread(f1)), len(set))
	}

	without := slices.DeleteFunc(slices.Clone(set), func(a netip.Addr) bool { return a == set[2] })
	final := append(slices.Clone(set), rs(0x55)...)
	reconcile(t, d1, service(without))
	reconcile(t, d1, service(set))
	reconcile(t, d1, service(final))
	dirs[1].Run(t, "ipvsadm", "-C")
	d2, _ = newKernelDirector(t, dirs[1])
	reconcile(t, d2, service(final))

	ports = flowprobe.PortRange(30000, flows)
	f1, f2 = flowprobe.Flows(t, clients[0], dirs[0], src, netip.AddrPortFrom(vip6, 80), ports), flowprobe.Flows(t, clients[1], dirs[1], src, netip.AddrPortFrom(vip6, 80), ports)
	t.Logf("round 2: %d flows over %d real servers; churned director vs fresh: %d disagree", flows, len(final), flowprobe.Disagreements(f1, f2))
	if n := flowprobe.Disagreements(f1, f2); n != 0 {
		t.Fatalf("round 2: churned and fresh directors disagree on %d of %d flows", n, flows)
	}
	if flowprobe.Spread(f1)[rs(0x55)[0].String()] == 0 {
		t.Errorf("the added real server got no flows: %v", flowprobe.Spread(f1))
	}
}

// TestIPv6VIPOverGUE: with a GUE cluster the director sends an IPv6 VIP's
// packets in GUE over IPv6 (IPVS tun_type gue, programmed through
// director.Kernel); netd, given netd.gue, adds an IPv6 GUE receiver beside
// the IPv4 one and clamps the IPv6 VIP for the larger header (1388 at MTU
// 1500); both gateways answer on the IPv6 VIP, with direct return.
func TestIPv6VIPOverGUE(t *testing.T) {
	if out, err := exec.Command("modprobe", "fou").CombinedOutput(); err != nil {
		t.Fatalf("modprobe fou: %v\n%s", err, out)
	}
	l := newDSRLab(t, 1, 2)
	gws6 := l.addIPv6(t)
	for _, g := range l.gateways {
		l.netd = append(l.netd, startDualNetd(t, g, fmt.Sprintf("  gue: {port: %d}\n", guePort)))
	}
	for _, g := range l.gateways {
		waitFor(t, 30*time.Second, "netd clamps "+g.Name+" for GUE over both families", func() bool {
			out := g.Run(t, "nft", "list", "chain", "inet", "tlb_netd", "mss_clamp")
			return strings.Contains(out, "maxseg size set 1428") && strings.Contains(out, "maxseg size set 1388")
		})
		if out := g.Run(t, "ip", "-6", "fou", "show"); !strings.Contains(out, fmt.Sprintf("port %d gue", guePort)) {
			t.Fatalf("%s: ip -6 fou show = %q, want an IPv6 gue receiver on %d", g.Name, out, guePort)
		}
	}
	l.serveHTTP6(t)
	d, k := newKernelDirector(t, l.directors[0])
	desired := dualService(l.gwAddrs, gws6)
	for i := range desired.Services {
		desired.Services[i].Encap = model.GUE(guePort)
	}
	reconcile(t, d, desired)
	listing := l.directors[0].Run(t, "ipvsadm", "-Ln", "--tun-info")
	t.Logf("director IPVS:\n%s", listing)
	if n := strings.Count(strings.ToLower(listing), "gue"); n < 4 {
		t.Errorf("ipvsadm shows %d GUE real servers, want 4 (two per family)", n)
	}
	if res := reconcile(t, d, desired); res.Writes != 0 {
		t.Errorf("resync wrote %d times, want 0 (GUE over IPv6 reads back as programmed)", res.Writes)
	}
	seen := map[string]int{}
	waitFor(t, 60*time.Second, "both gateways answer on the IPv6 VIP over GUE", func() bool {
		seen[getFrom(t, l.client, vip6)]++
		return len(seen) == 2
	})
	st := statsOf(t, k.Handle, vip6, 80)
	t.Logf("IPv6 VIP over GUE: answers per gateway %v; IPVS in %d pkts, out %d pkts", seen, st.PacketsIn, st.PacketsOut)
	if st.PacketsOut != 0 {
		t.Errorf("IPVS forwarded %d reply packets: replies went through the director", st.PacketsOut)
	}
}
