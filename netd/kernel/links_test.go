package kernel

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/tlbproject/tlb/netd"
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
	for _, x := range []netd.TunnelAddr{foreign, ours, ours} { // replacing twice is idempotent
		if err := l.ReplaceAddr("tun9", x); err != nil {
			t.Fatalf("ReplaceAddr %v: %v", x, err)
		}
	}
	got, err := l.Addrs("tun9")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, ours) || !slices.Contains(got, foreign) || len(got) != 2 {
		t.Fatalf("Addrs = %v, want %v and %v with their labels", got, ours, foreign)
	}
	if err := l.DelAddr("tun9", ours); err != nil {
		t.Fatal(err)
	}
	if got, _ = l.Addrs("tun9"); !slices.Equal(got, []netd.TunnelAddr{foreign}) {
		t.Fatalf("after DelAddr, Addrs = %v, want only %v", got, foreign)
	}
}
