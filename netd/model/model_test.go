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

func TestWithPortsSortsAndDeduplicates(t *testing.T) {
	v10, v11 := netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.11")
	https11 := PortMap{VIP: v11, Protocol: ProtocolTCP, Port: 443, TargetPort: 10443}
	http10 := PortMap{VIP: v10, Protocol: ProtocolTCP, Port: 80, TargetPort: 8080}
	https10 := PortMap{VIP: v10, Protocol: ProtocolTCP, Port: 443, TargetPort: 10443}
	in := []PortMap{https11, https10, http10, https11}
	g := NewGateway("tunl0", []netip.Addr{v10, v11}, DefaultMSS).WithPorts(in)
	if want := []PortMap{http10, https10, https11}; !slices.Equal(g.Ports, want) {
		t.Fatalf("Ports = %v, want %v", g.Ports, want)
	}
	if in[0] != https11 {
		t.Fatalf("WithPorts changed its input: %v", in)
	}
	if got, want := https10.String(), "tcp 203.0.113.10:443->10443"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}
