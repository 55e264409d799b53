//go:build lab

package l4

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/tlb/model"
)

// The L7 tier's port map: Envoy listens unprivileged on 10443 while
// clients connect to VIP:443. IPVS tunnel mode keeps the port, so netd on
// the gateway redirects VIP:443 to VIP:10443.
const (
	externalPort = 443
	listenerPort = 10443
)

// TestPortMapServesExternalPortFromListenerPort proves netd's port map
// end to end: client -> router -> director (IPVS, VIP:443, tunnel mode) ->
// IPIP -> gateways running the real netd binary with
// `ports: [{vip, port: 443, targetPort: 10443}]`, where a server listens
// only on VIP:10443. Before the map VIP:443 is refused; after netd reloads
// its file with the map, both gateways answer, the client sees VIP:443 as
// its peer, replies bypass the director (DSR), and a 512 KiB upload
// completes at MTU 1500 with ICMP frag-needed dropped: the MSS clamp
// applies to the redirected connections. Control: with the clamp rule
// flushed and the map kept, the same upload stalls.
func TestPortMapServesExternalPortFromListenerPort(t *testing.T) {
	// The VM cannot load modules on demand (the kernel's modprobe helper
	// runs in the initramfs, which has no modules); a node's kernel loads
	// nft_nat itself when netd first writes a dnat rule.
	if out, err := exec.Command("modprobe", "nft_nat").CombinedOutput(); err != nil {
		t.Fatalf("modprobe nft_nat: %v\n%s", err, out)
	}
	l := newDSRLab(t, 1, 2)
	dir, dirIf := l.directors[0], l.dirIfs[0]
	for _, g := range l.gateways {
		l.netd = append(l.netd, startNetd(t, g, vip))
		serveListenerPort(t, g)
	}
	d, h := newDirector(t, dir)
	var rs []model.RealServer
	for _, a := range l.gwAddrs {
		rs = append(rs, model.RealServer{Addr: a, Weight: 1})
	}
	reconcile(t, d, model.Desired{Services: []model.Service{{VIP: vip, Protocol: model.TCP, Port: externalPort, RealServers: rs}}})
	l.router.Run(t, "nft", "add table inet lab; add chain inet lab icmpdrop { type filter hook forward priority 0; }; "+
		"add rule inet lab icmpdrop icmp type destination-unreachable icmp code 4 counter drop")

	// Control: without a port map nothing listens on VIP:443.
	if a, err := exchange(l.client, 0, 0, 10*time.Second); err == nil {
		t.Fatalf("VIP:%d answered %+v before netd maps the port; the test cannot tell the map works", externalPort, a)
	} else {
		t.Logf("control: without the port map VIP:%d fails: %v", externalPort, err)
	}

	// netd reloads its file with the port map.
	ports := fmt.Sprintf("ports:\n- {vip: %s, port: %d, targetPort: %d}\n", vip, externalPort, listenerPort)
	rule := fmt.Sprintf("dnat ip to %s:%d", vip, listenerPort)
	for _, p := range l.netd {
		writeFile(t, p.config, netdConfig(p.metrics, vip)+ports)
	}
	for _, g := range l.gateways {
		waitFor(t, 60*time.Second, "netd maps the port in "+g.Name, func() bool {
			out, err := g.Cmd("nft", "list", "table", "inet", "tlb_netd").CombinedOutput()
			return err == nil && strings.Contains(string(out), rule)
		})
	}

	// Downloads over new connections (new source ports, so mh spreads them).
	rx0, tx0 := linkBytes(t, dir, dirIf)
	const conns, down = 20, 64 << 10
	counts := map[string]int{}
	for i := range conns {
		a, err := exchange(l.client, 0, down, 60*time.Second)
		if err != nil {
			t.Fatalf("connection %d to VIP:%d: %v", i, externalPort, err)
		}
		if a.local != netip.AddrPortFrom(vip, listenerPort).String() || a.remote != netip.AddrPortFrom(vip, externalPort).String() {
			t.Fatalf("connection %d: served on %s, client's peer %s; want served on %s:%d and peer %s:%d",
				i, a.local, a.remote, vip, listenerPort, vip, externalPort)
		}
		if a.mss <= 0 || a.mss > 1440 {
			t.Fatalf("connection %d: client learned MSS %d, want <= 1440 (netd's clamp)", i, a.mss)
		}
		counts[a.gateway]++
	}
	rx1, tx1 := linkBytes(t, dir, dirIf)
	st := serviceStats(t, h, externalPort)
	served := conns * down
	dirBytes := (rx1 - rx0) + (tx1 - tx0)
	t.Logf("%d connections to VIP:%d answered from :%d: %v; served %d bytes, director link moved %d; IPVS in %d pkts, out %d pkts",
		conns, externalPort, listenerPort, counts, served, dirBytes, st.PacketsIn, st.PacketsOut)
	for _, g := range l.gateways {
		if counts[g.Name] == 0 {
			t.Errorf("gateway %s answered none of %d connections: %v", g.Name, conns, counts)
		}
	}
	if st.PacketsIn == 0 {
		t.Fatalf("IPVS saw no packets for VIP:%d: traffic did not pass the director", externalPort)
	}
	if st.PacketsOut != 0 {
		t.Errorf("IPVS forwarded %d reply packets: replies went through the director", st.PacketsOut)
	}
	if dirBytes > uint64(served)/5 {
		t.Errorf("director link moved %d bytes for %d served: replies seem to pass it", dirBytes, served)
	}

	// Upload: full-size segments would not fit the tunnel; the clamp on the
	// redirected connection's SYN-ACK keeps them small.
	const up = 512 << 10
	a, err := exchange(l.client, up, 0, 120*time.Second)
	if err != nil {
		t.Fatalf("%d byte upload to VIP:%d: %v", up, externalPort, err)
	}
	if a.got != up {
		t.Fatalf("gateway %s received %d bytes of a %d byte upload", a.gateway, a.got, up)
	}
	t.Logf("upload of %d bytes to VIP:%d received by %s on %s (client MSS %d); router: %s", up, externalPort, a.gateway, a.local, a.mss,
		strings.TrimSpace(l.router.Run(t, "nft", "list", "chain", "inet", "lab", "icmpdrop")))

	// Control: stop netd and flush only the clamp rule, keeping the port
	// map. Redirected connections still work, but the upload now stalls:
	// it was the clamp on the redirected connections that carried it.
	for i, g := range l.gateways {
		l.netd[i].stop()
		g.Run(t, "nft", "flush", "chain", "inet", "tlb_netd", "mss_clamp")
	}
	l.client.Run(t, "ip", "route", "flush", "cache")
	a, err = exchange(l.client, 0, 0, 30*time.Second)
	if err != nil || a.local != netip.AddrPortFrom(vip, listenerPort).String() {
		t.Fatalf("without the clamp the port map itself must still work: %+v, %v", a, err)
	}
	if a.mss <= 1440 {
		t.Fatalf("without the clamp the client learned MSS %d; the control cannot tell the clamp mattered", a.mss)
	}
	unclamped := a.mss
	if a, err := exchange(l.client, up, 0, 15*time.Second); err == nil {
		t.Fatalf("upload without the clamp completed (%+v); the test cannot show the clamp applies to redirected connections", a)
	} else {
		t.Logf("control: port map alone, client MSS %d; the %d byte upload failed as expected: %v", unclamped, up, err)
	}
}

// answer is what one exchange with the VIP learned.
type answer struct {
	gateway string // the gateway that served it
	local   string // the address the server accepted on
	got     int    // bytes the server received after the request line
	remote  string // the client's view of its peer
	mss     int    // the MSS the client learned
}

// exchange connects from the client to VIP:externalPort, asks for down
// bytes, uploads up bytes and reads the answer.
func exchange(client *topo.Node, up, down int, timeout time.Duration) (answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := client.DialContext(ctx, "tcp4", netip.AddrPortFrom(vip, externalPort).String())
	if err != nil {
		return answer{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	a := answer{remote: c.RemoteAddr().String()}
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return answer{}, err
	}
	if err := raw.Control(func(fd uintptr) { a.mss, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG) }); err != nil {
		return answer{}, err
	}
	if _, err := fmt.Fprintf(c, "down %d\n", down); err != nil {
		return answer{}, fmt.Errorf("send request: %w", err)
	}
	if _, err := io.CopyN(c, zeros{}, int64(up)); err != nil {
		return answer{}, fmt.Errorf("upload %d bytes: %w", up, err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return answer{}, err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil {
		return answer{}, fmt.Errorf("read answer: %w", err)
	}
	if _, err := fmt.Sscanf(head, "%s %s %d", &a.gateway, &a.local, &a.got); err != nil {
		return answer{}, fmt.Errorf("answer %q: %w", head, err)
	}
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return a, fmt.Errorf("download: got %d of %d bytes: %w", n, down, err)
	}
	if n != int64(down) {
		return a, fmt.Errorf("download: got %d of %d bytes", n, down)
	}
	return a, nil
}

// serveListenerPort runs, in node, a TCP server on VIP:listenerPort only.
// It reads "down N\n", counts the bytes that follow until the client
// closes its side, answers "<node> <local addr> <bytes>\n" and N zeros.
func serveListenerPort(t *testing.T, node *topo.Node) {
	t.Helper()
	ln, err := node.Listen("tcp4", netip.AddrPortFrom(vip, listenerPort).String())
	if err != nil {
		t.Fatalf("listen on %s:%d in %s: %v", vip, listenerPort, node.Name, err)
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
				_ = c.SetDeadline(time.Now().Add(3 * time.Minute))
				r := bufio.NewReader(c)
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				down, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "down "))
				if err != nil {
					return
				}
				got, _ := io.Copy(io.Discard, r)
				fmt.Fprintf(c, "%s %s %d\n", node.Name, c.LocalAddr(), got)
				_, _ = io.CopyN(c, zeros{}, int64(down))
			}()
		}
	}()
}

// statsOf returns the IPVS counters of the TCP service VIP:port.
