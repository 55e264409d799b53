package kernel

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
)

func TestRouteMTUIsTheDefaultRouteLinks(t *testing.T) {
	a, b := newNetNS(t), newNetNS(t)
	vethPair(t, a, b, "up0", "peer0")
	h := handleAt(t, a)
	l := NewLinks(h)
	if _, err := l.RouteMTU(); err == nil || !strings.Contains(err.Error(), "no IPv4 default route and no link") {
		t.Fatalf("RouteMTU without a default route or an address: %v", err)
	}
	mustAddr(t, h, "up0", "198.18.0.2/24")
	lk, err := h.LinkByName("up0")
	if err != nil {
		t.Fatal(err)
	}
	if mtu, err := l.RouteMTU(); err != nil || mtu != 1500 {
		t.Fatalf("RouteMTU without a default route = %d, %v; want the addressed link's 1500", mtu, err)
	}
	if err := h.LinkSetMTU(lk, 9000); err != nil {
		t.Fatal(err)
	}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: lk.Attrs().Index, Gw: net.ParseIP("198.18.0.1")}); err != nil {
		t.Fatal(err)
	}
	// A more specific route on another link does not count.
	if err := h.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "other0", MTU: 1400}}); err == nil {
		other, _ := h.LinkByName("other0")
		_ = h.LinkSetUp(other)
		_, dst, _ := net.ParseCIDR("10.0.0.0/8")
		if err := h.RouteAdd(&netlink.Route{LinkIndex: other.Attrs().Index, Dst: dst}); err != nil {
			t.Fatal(err)
		}
	}
	if mtu, err := l.RouteMTU(); err != nil || mtu != 9000 {
		t.Fatalf("RouteMTU = %d, %v; want 9000", mtu, err)
	}
}

func TestClampOffKeepsTheSetAndWritesNoRule(t *testing.T) {
	ns := newNetNS(t)
	c := NewClamp(ns)
	v10 := netip.MustParseAddr("203.0.113.10")
	if err := c.Rebuild(0, []netip.Addr{v10}, nil); err != nil {
		t.Fatal(err)
	}
	st, err := c.State()
	if err != nil || !st.Intact || st.MSS != 0 || !sameAddrs(st.VIPs, []netip.Addr{v10}) {
		t.Fatalf("State with the clamp off = %+v, %v; want intact, MSS 0, the VIP in the set", st, err)
	}
	if listing := nftIn(t, nsPath(ns), "list table inet tlb_netd"); strings.Contains(listing, "maxseg") {
		t.Fatalf("clamp off still rewrites the MSS:\n%s", listing)
	}
	// Back on: one rebuild.
	if err := c.Rebuild(8940, []netip.Addr{v10}, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := c.State(); err != nil || !st.Intact || st.MSS != 8940 {
		t.Fatalf("State after turning the clamp on at 8940 = %+v, %v", st, err)
	}
}

func TestGUEPortRequestCarriesNoIPProto(t *testing.T) {
	for _, ipv6 := range []bool{false, true} {
		checkGUEPortRequest(t, ipv6)
	}
}

func checkGUEPortRequest(t *testing.T, ipv6 bool) {
	t.Helper()
	af := byte(2) // AF_INET
	if ipv6 {
		af = 10 // AF_INET6
	}
	p := guePortRequest(6080, ipv6)
	if p[0] != netlink.FOU_CMD_ADD || p[1] != 1 {
		t.Fatalf("header %v", p[:4])
	}
	attrs, err := nl.ParseRouteAttr(p[nl.SizeofGenlmsg:])
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint16][]byte{}
	for _, a := range attrs {
		got[a.Attr.Type] = a.Value
	}
	want := map[uint16][]byte{
		netlink.FOU_ATTR_PORT: {0x17, 0xc0}, // big endian
		netlink.FOU_ATTR_TYPE: {netlink.FOU_ENCAP_GUE},
		netlink.FOU_ATTR_AF:   {af},
	}
	if len(got) != len(want) {
		t.Fatalf("attributes %v, want only port, type and family (an IPPROTO of 0 is refused with ERANGE)", got)
	}
	for typ, v := range want {
		if string(got[typ]) != string(v) {
			t.Errorf("attribute %d = %v, want %v", typ, got[typ], v)
		}
	}
}
