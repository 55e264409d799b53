package kernel

import (
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables/userdata"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/netd/model"
)

func TestPortMapStateRebuild(t *testing.T) {
	ns := newNetNS(t)
	path := nsPath(ns)
	c := NewClamp(ns)
	v10, v11 := netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.11")
	https := model.PortMap{VIP: v10, Protocol: model.ProtocolTCP, Port: 443, TargetPort: 10443}
	http := model.PortMap{VIP: v10, Protocol: model.ProtocolTCP, Port: 80, TargetPort: 8080}
	other := model.PortMap{VIP: v11, Protocol: model.ProtocolTCP, Port: 443, TargetPort: 11443}
	nftIn(t, path, "add table inet foreign; add chain inet foreign p { type nat hook prerouting priority dstnat; }; add rule inet foreign p tcp dport 1 counter")

	ports := []model.PortMap{http, https, other}
	if err := c.Rebuild(1440, []netip.Addr{v10, v11}, ports); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	st, err := c.State()
	if err != nil || !st.Intact || !slices.Equal(st.Ports, ports) {
		t.Fatalf("State after Rebuild = %+v, %v; want intact with %v", st, err, ports)
	}
	listing := nftIn(t, path, "list table inet tlb_netd")
	for _, want := range []string{"hook prerouting priority dstnat", "ip daddr 203.0.113.10 tcp dport 443 dnat ip to 203.0.113.10:10443",
		`comment "tlb-netd port tcp 203.0.113.11:443->11443"`, "tcp option maxseg size set 1440"} {
		if !strings.Contains(listing, want) {
			t.Errorf("nft listing lacks %q:\n%s", want, listing)
		}
	}

	// A rule whose comment names a mapping but whose target differs is not
	// netd's rule: the table is not intact.
	nftIn(t, path, "flush chain inet tlb_netd port_map; add rule inet tlb_netd port_map ip daddr 203.0.113.10 tcp dport 443 dnat ip to 203.0.113.10:9999 comment \"tlb-netd port tcp 203.0.113.10:443->10443\"")
	if st, err = c.State(); err != nil || st.Intact {
		t.Fatalf("State with a tampered rule = %+v, %v; want not intact", st, err)
	}

	// No ports: no nat chain at all (a nat chain makes the kernel track
	// every connection), and the state reads back as intact and empty.
	if err := c.Rebuild(1440, []netip.Addr{v10}, nil); err != nil {
		t.Fatalf("Rebuild without ports: %v", err)
	}
	if st, err = c.State(); err != nil || !st.Intact || len(st.Ports) != 0 {
		t.Fatalf("State without ports = %+v, %v", st, err)
	}
	if got := nftIn(t, path, "list table inet tlb_netd"); strings.Contains(got, "port_map") {
		t.Fatalf("nat chain left without ports:\n%s", got)
	}
	if got := nftIn(t, path, "list table inet foreign"); !strings.Contains(got, "tcp dport 1 counter") {
		t.Fatalf("foreign table changed:\n%s", got)
	}
}

func TestParsePortTagRejectsOthers(t *testing.T) {
	for name, s := range map[string]string{
		"udp":          "tlb-netd port udp 203.0.113.10:53->5353",
		"ipv6":         "tlb-netd port tcp [2001:db8::1]:443->10443",
		"no arrow":     "tlb-netd port tcp 203.0.113.10:443",
		"bad target":   "tlb-netd port tcp 203.0.113.10:443->70000",
		"clamp tag":    "tlb-netd mss=1440",
		"foreign note": "something else",
	} {
		t.Run(name, func(t *testing.T) {
			if m, ok := parsePortTag(userdata.AppendString(nil, userdata.TypeComment, s)); ok {
				t.Fatalf("parsed %q as %v", s, m)
			}
		})
	}
	m := model.PortMap{VIP: netip.MustParseAddr("203.0.113.10"), Protocol: "tcp", Port: 443, TargetPort: 10443}
	if got, ok := parsePortTag(portTag(m)); !ok || got != m {
		t.Fatalf("round trip of %v = %v, %v", m, got, ok)
	}
}

// TestPortMapRedirectsAndClamps proves the port map on the wire: a client
// in another namespace connects to VIP:80 and reaches the listener on
// VIP:8080, sees the connection's remote end as VIP:80 (the reply was
// un-NATed), and learns the clamped MSS on that redirected connection.
func TestPortMapRedirectsAndClamps(t *testing.T) {
	gw, client := newNetNS(t), newNetNS(t)
	vethPair(t, gw, client, "gw0", "cl0")
	hg, hc := handleAt(t, gw), handleAt(t, client)
	mustAddr(t, hg, "gw0", "198.18.0.1/24")
	mustAddr(t, hg, "lo", "203.0.113.10/32")
	mustAddr(t, hc, "cl0", "198.18.0.2/24")
	_, vipNet, _ := net.ParseCIDR("203.0.113.10/32")
	lk, _ := hc.LinkByName("cl0")
	if err := hc.RouteAdd(&netlink.Route{Dst: vipNet, Gw: net.ParseIP("198.18.0.1"), LinkIndex: lk.Attrs().Index}); err != nil {
		t.Fatalf("route to VIP: %v", err)
	}
	ln := listenIn(t, gw, "203.0.113.10:8080")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "listener "+c.LocalAddr().String()+"\n")
			_ = c.Close()
		}
	}()

	// dial returns what the listener says, the client's view of the
	// remote address, and the MSS the client learned.
	dial := func(addr string) (said, remote string, mss int, err error) {
		inNS(t, client, func() {
			var c net.Conn
			c, err = net.DialTimeout("tcp4", addr, 3*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			remote = c.RemoteAddr().String()
			raw, _ := c.(*net.TCPConn).SyscallConn()
			_ = raw.Control(func(fd uintptr) {
				mss, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG)
			})
			_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
			var b []byte
			b, err = io.ReadAll(c)
			said = strings.TrimSpace(string(b))
		})
		return said, remote, mss, err
	}

	if said, _, _, err := dial("203.0.113.10:80"); err == nil {
		t.Fatalf("VIP:80 answered (%q) before any port map; the test cannot tell the map works", said)
	}
	vip := netip.MustParseAddr("203.0.113.10")
	ports := []model.PortMap{{VIP: vip, Protocol: model.ProtocolTCP, Port: 80, TargetPort: 8080}}
	if err := NewClamp(gw).Rebuild(1400, []netip.Addr{vip}, ports); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	said, remote, mss, err := dial("203.0.113.10:80")
	if err != nil {
		t.Fatalf("dial VIP:80 with the port map: %v", err)
	}
	t.Logf("client to 203.0.113.10:80: listener said %q, remote %s, MSS %d (clamp 1400)", said, remote, mss)
	if said != "listener 203.0.113.10:8080" {
		t.Fatalf("listener said %q, want it to be the one on 203.0.113.10:8080", said)
	}
	if remote != "203.0.113.10:80" {
		t.Fatalf("client sees remote %s, want 203.0.113.10:80 (un-NATed reply)", remote)
	}
	if mss == 0 || mss > 1400 {
		t.Fatalf("MSS on the redirected connection = %d, want clamped to <= 1400", mss)
	}
	// Another port on the VIP is not redirected.
	if said, _, _, err := dial("203.0.113.10:81"); err == nil {
		t.Fatalf("VIP:81 answered (%q); only port 80 is mapped", said)
	}
}
