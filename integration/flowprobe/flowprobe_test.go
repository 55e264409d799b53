package flowprobe

import (
	"net/netip"
	"testing"
)

// TestTable: both families' lines of `ipvsadm -Lnc` are read, and only the
// probe client's flows to the probed service on the probed ports count.
func TestTable(t *testing.T) {
	out := `IPVS connection entries
pro expire state       source             virtual            destination
TCP 00:59  SYN_RECV    198.18.50.2:20000  203.0.113.10:80    198.18.100.30:80
TCP 00:59  SYN_RECV    198.18.50.2:20001  203.0.113.10:443   198.18.100.40:443
TCP 00:59  SYN_RECV    198.18.50.3:20002  203.0.113.10:80    198.18.100.40:80
TCP 00:59  SYN_RECV    [fd00::2]:20000    [2001:db8:cafe::10]:80 [fd00:10:1::2]:80
TCP 00:59  SYN_RECV    [fd00::2]:19999    [2001:db8:cafe::10]:80 [fd00:10:2::2]:80
`
	ports := PortRange(20000, 3)
	v4 := Table(out, netip.MustParseAddr("198.18.50.2"), netip.MustParseAddrPort("203.0.113.10:80"), ports)
	if len(v4) != 1 || v4[20000] != "198.18.100.30" {
		t.Errorf("IPv4 table %v, want only 20000 -> 198.18.100.30", v4)
	}
	v6 := Table(out, netip.MustParseAddr("fd00::2"), netip.MustParseAddrPort("[2001:db8:cafe::10]:80"), ports)
	if len(v6) != 1 || v6[20000] != "fd00:10:1::2" {
		t.Errorf("IPv6 table %v, want only 20000 -> fd00:10:1::2", v6)
	}
	if n := Disagreements(v4, map[int]string{20000: "198.18.100.31"}); n != 1 {
		t.Errorf("Disagreements = %d, want 1", n)
	}
	if s := Spread(v6); s["fd00:10:1::2"] != 1 {
		t.Errorf("Spread = %v", s)
	}
}
