package model

import (
	"net/netip"
	"slices"
	"testing"
)

func TestNewGatewaySortsAndDeduplicates(t *testing.T) {
	a := netip.MustParseAddr("203.0.113.11")
	b := netip.MustParseAddr("203.0.113.10")
	g := NewGateway("tunl0", []netip.Addr{a, b, a}, DefaultMSS)
	if want := []netip.Addr{b, a}; !slices.Equal(g.VIPs, want) {
		t.Fatalf("VIPs = %v, want %v", g.VIPs, want)
	}
}

func TestAddrLabelFitsKernelLimit(t *testing.T) {
	name := "abcdefghijklmno"[:MaxTunnelNameLen]
	g := Gateway{Tunnel: name}
	if got := len(g.AddrLabel()); got > 15 {
		t.Fatalf("label %q is %d bytes, kernel limit is 15", g.AddrLabel(), got)
	}
}

func TestSysctlsNameTheTunnel(t *testing.T) {
	g := Gateway{Tunnel: "tun9"}
	found := false
	for _, s := range g.Sysctls() {
		if s.Key == "net/ipv4/conf/tun9/rp_filter" {
			found = true
		}
		if s.Key == "net/ipv4/conf/all/rp_filter" {
			t.Errorf("netd must not change rp_filter on all interfaces")
		}
	}
	if !found {
		t.Fatalf("no rp_filter setting for the tunnel in %v", g.Sysctls())
	}
}
