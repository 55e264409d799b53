package ipvstun

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink/nl"
)

var (
	svc80 = Service{Protocol: syscall.IPPROTO_TCP, Addr: netip.MustParseAddrPort("203.0.113.10:80")}
	gueRS = Dest{Addr: netip.MustParseAddrPort("198.18.10.2:80"), Fwd: 2, Weight: 3,
		Tunnel: Tunnel{Type: GUE, Port: 6080, Flags: FlagCSum}}
)

// attrs parses the nested attribute of type typ out of a payload.
func attrs(t *testing.T, payload []byte, typ uint16) map[uint16][]byte {
	t.Helper()
	outer, err := nl.ParseRouteAttr(payload[nl.SizeofGenlmsg:])
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range outer {
		if a.Attr.Type == typ {
			inner, err := nl.ParseRouteAttr(a.Value)
			if err != nil {
				t.Fatal(err)
			}
			m := map[uint16][]byte{}
			for _, x := range inner {
				m[x.Attr.Type] = x.Value
			}
			return m
		}
	}
	t.Fatalf("no attribute %d in payload", typ)
	return nil
}

func TestEncodeDestCarriesTunnelAttributes(t *testing.T) {
	for name, update := range map[string]bool{"new": false, "set": true} {
		t.Run(name, func(t *testing.T) {
			p := encodeDest(svc80, gueRS, update)
			wantCmd := byte(cmdNewDest)
			if update {
				wantCmd = cmdSetDest
			}
			if p[0] != wantCmd || p[1] != genlVersion {
				t.Fatalf("generic netlink header %v, want command %d version %d", p[:4], wantCmd, genlVersion)
			}
			native := nl.NativeEndian()
			s := attrs(t, p, cmdAttrService)
			if got := native.Uint16(s[svcAttrAF]); got != syscall.AF_INET {
				t.Errorf("service family %d", got)
			}
			if got := native.Uint16(s[svcAttrProtocol]); got != syscall.IPPROTO_TCP {
				t.Errorf("service protocol %d", got)
			}
			if !bytes.Equal(s[svcAttrAddr], []byte{203, 0, 113, 10}) || !bytes.Equal(s[svcAttrPort], []byte{0, 80}) {
				t.Errorf("service address %v port %v", s[svcAttrAddr], s[svcAttrPort])
			}
			d := attrs(t, p, cmdAttrDest)
			checks := []struct {
				name string
				typ  uint16
				want []byte
			}{
				{"address", destAttrAddr, []byte{198, 18, 10, 2}},
				{"port (big endian)", destAttrPort, []byte{0, 80}},
				{"forwarding", destAttrFwdMethod, nl.Uint32Attr(2)},
				{"weight", destAttrWeight, nl.Uint32Attr(3)},
				{"upper threshold", destAttrUThresh, nl.Uint32Attr(0)},
				{"lower threshold", destAttrLThresh, nl.Uint32Attr(0)},
				{"tunnel type (u8)", destAttrTunType, []byte{1}},
				{"tunnel port (big endian: 6080 = 0x17c0)", destAttrTunPort, []byte{0x17, 0xc0}},
				{"tunnel flags (u16, host order)", destAttrTunFlags, nl.Uint16Attr(FlagCSum)},
			}
			for _, c := range checks {
				if !bytes.Equal(d[c.typ], c.want) {
					t.Errorf("%s (attribute %d) = %v, want %v", c.name, c.typ, d[c.typ], c.want)
				}
			}
		})
	}
}

func TestEncodeDestIPv6(t *testing.T) {
	d := gueRS
	d.Addr = netip.MustParseAddrPort("[2001:db8::2]:80")
	attr := attrs(t, encodeDest(Service{Protocol: syscall.IPPROTO_TCP, Addr: netip.MustParseAddrPort("[2001:db8::10]:80")}, d, false), cmdAttrDest)
	if got := nl.NativeEndian().Uint16(attr[destAttrAF]); got != syscall.AF_INET6 || len(attr[destAttrAddr]) != 16 {
		t.Fatalf("IPv6 real server encoded with family %d and a %d-byte address", got, len(attr[destAttrAddr]))
	}
}

// kernelDest builds a dump message the way the kernel does
// (ip_vs_genl_fill_dest): a 16-byte address, statistics nested.
func kernelDest(addr [16]byte, af uint16, port uint16, tun []byte) []byte {
	a := nl.NewRtAttr(cmdAttrDest|syscall.NLA_F_NESTED, nil)
	a.AddRtAttr(destAttrAddr, addr[:])
	a.AddRtAttr(destAttrAF, nl.Uint16Attr(af))
	a.AddRtAttr(destAttrPort, binary.BigEndian.AppendUint16(nil, port))
	a.AddRtAttr(destAttrFwdMethod, nl.Uint32Attr(2|0x0100)) // a flag outside the forwarding mask
	a.AddRtAttr(destAttrWeight, nl.Uint32Attr(7))
	if tun != nil {
		a.AddRtAttr(destAttrTunType, tun[:1])
		a.AddRtAttr(destAttrTunPort, tun[1:3])
		a.AddRtAttr(destAttrTunFlags, nl.Uint16Attr(0))
	}
	a.AddRtAttr(destAttrActive, nl.Uint32Attr(4))
	a.AddRtAttr(destAttrInactive, nl.Uint32Attr(5))
	stats := a.AddRtAttr(10, nil)
	stats.AddRtAttr(1, nl.Uint32Attr(99))
	return append((&nl.Genlmsg{Command: 1, Version: 1}).Serialize(), a.Serialize()...)
}

func TestParseDest(t *testing.T) {
	var v4 [16]byte
	copy(v4[:], []byte{198, 18, 10, 2})
	v6 := netip.MustParseAddr("2001:db8::2").As16()
	cases := map[string]struct {
		msg  []byte
		want Dest
	}{
		"gue": {kernelDest(v4, syscall.AF_INET, 80, []byte{1, 0x17, 0xc0}),
			Dest{Addr: netip.MustParseAddrPort("198.18.10.2:80"), Fwd: 2, Weight: 7, Tunnel: Tunnel{Type: GUE, Port: 6080},
				ActiveConns: 4, InactiveConns: 5}},
		"ipip, kernel without tunnel attributes": {kernelDest(v4, syscall.AF_INET, 443, nil),
			Dest{Addr: netip.MustParseAddrPort("198.18.10.2:443"), Fwd: 2, Weight: 7, ActiveConns: 4, InactiveConns: 5}},
		"ipv6": {kernelDest(v6, syscall.AF_INET6, 80, []byte{1, 0, 1}),
			Dest{Addr: netip.MustParseAddrPort("[2001:db8::2]:80"), Fwd: 2, Weight: 7, Tunnel: Tunnel{Type: GUE, Port: 1},
				ActiveConns: 4, InactiveConns: 5}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseDest(c.msg)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("parsed %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestParseDestRoundTrip(t *testing.T) {
	p := encodeDest(svc80, gueRS, false)
	// A dump answer carries only the destination attribute.
	d := attrs(t, p, cmdAttrDest)
	a := nl.NewRtAttr(cmdAttrDest, nil)
	for typ, v := range d {
		a.AddRtAttr(int(typ), v)
	}
	got, err := parseDest(append((&nl.Genlmsg{Command: cmdNewDest, Version: 1}).Serialize(), a.Serialize()...))
	if err != nil {
		t.Fatal(err)
	}
	if got != gueRS {
		t.Fatalf("round trip %+v, want %+v", got, gueRS)
	}
}

func TestParseDestRejectsBrokenMessages(t *testing.T) {
	for name, msg := range map[string][]byte{
		"short":           {1, 1},
		"no destination":  append((&nl.Genlmsg{Command: 1, Version: 1}).Serialize(), nl.NewRtAttr(cmdAttrService, nil).Serialize()...),
		"no address":      kernelDest([16]byte{}, 99, 80, nil),
		"truncated attrs": append((&nl.Genlmsg{Command: 1, Version: 1}).Serialize(), 8, 0, 2, 0, 1),
	} {
		if _, err := parseDest(msg); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}
