package kernel

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/tlbproject/tlb/netd"
	"github.com/tlbproject/tlb/netd/model"
)

// The build machines' kernel has no ipip, so tunnel creation is proven in
// the lab (integration/l4); here the address and state logic runs against
// a real veth link.
func TestLinksAddressesOnRealLink(t *testing.T) {
	a, b := newNetNS(t), newNetNS(t)
	vethPair(t, a, b, "tun9", "peer9")
	l := NewLinks(handleAt(t, a))

	st, err := l.Tunnel("tun9")
	if err != nil || !st.Exists || st.Kind != "veth" || !st.Up {
		t.Fatalf("Tunnel(tun9) = %+v, %v", st, err)
	}
	if st, err := l.Tunnel("nope0"); err != nil || st.Exists {
		t.Fatalf("Tunnel(nope0) = %+v, %v; want absent, no error", st, err)
	}

	foreign := netd.TunnelAddr{Prefix: netip.MustParsePrefix("198.51.100.7/32"), Label: "tun9"}
	ours := netd.TunnelAddr{Prefix: netip.MustParsePrefix("203.0.113.10/32"), Label: "tun9:tlb"}
	// An IPv6 address added by someone else (DAD and a prefix route, as
	// "ip -6 addr add" does) reads unlabelled; netd's reads as Mark6.
	foreign6 := netd.TunnelAddr{Prefix: netip.MustParsePrefix("2001:db8:beef::1/128")}
	ours6 := netd.TunnelAddr{Prefix: netip.MustParsePrefix("2001:db8:cafe::10/128"), Label: model.Mark6}
	for _, x := range []netd.TunnelAddr{foreign, ours, ours, ours6, ours6} { // replacing twice is idempotent
		if err := l.ReplaceAddr("tun9", x); err != nil {
			t.Fatalf("ReplaceAddr %v: %v", x, err)
		}
	}
	lk, err := handleAt(t, a).LinkByName("tun9")
	if err != nil {
		t.Fatal(err)
	}
	if err := handleAt(t, a).AddrAdd(lk, &netlink.Addr{IPNet: &net.IPNet{IP: foreign6.Prefix.Addr().AsSlice(), Mask: net.CIDRMask(128, 128)}}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Addrs("tun9")
	if err != nil {
		t.Fatal(err)
	}
	got = slices.DeleteFunc(got, func(x netd.TunnelAddr) bool { return x.Prefix.Addr().IsLinkLocalUnicast() })
	if len(got) != 4 || !slices.Contains(got, ours) || !slices.Contains(got, foreign) || !slices.Contains(got, ours6) || !slices.Contains(got, foreign6) {
		t.Fatalf("Addrs = %v, want %v, %v, %v and %v with their labels", got, ours, foreign, ours6, foreign6)
	}
	for _, x := range []netd.TunnelAddr{ours, ours6} {
		if err := l.DelAddr("tun9", x); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = l.Addrs("tun9")
	got = slices.DeleteFunc(got, func(x netd.TunnelAddr) bool { return x.Prefix.Addr().IsLinkLocalUnicast() })
	if len(got) != 2 || !slices.Contains(got, foreign) || !slices.Contains(got, foreign6) {
		t.Fatalf("after DelAddr, Addrs = %v, want only %v and %v", got, foreign, foreign6)
	}
}
