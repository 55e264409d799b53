package model

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
)

// ProtocolTCP is the only protocol a port mapping supports: the L7 tier's
// listeners (HTTP, HTTPS, TCP) all run over TCP.
const ProtocolTCP = "tcp"

// PortMap redirects connections to VIP:Port on the gateway to the local
// listener on VIP:TargetPort. IPVS tunnel mode cannot change the port, so
// a packet reaches the gateway still addressed to the external port (443)
// while the unprivileged proxy listens on another (10443).
type PortMap struct {
	// VIP is the destination address; it is one of the gateway's VIPs.
	VIP netip.Addr
	// Protocol is the transport protocol (ProtocolTCP).
	Protocol string
	// Port is the external port clients connect to.
	Port uint16
	// TargetPort is the port the local listener binds on the VIP.
	TargetPort uint16
}

// String renders the mapping as "tcp 203.0.113.10:443->10443".
func (p PortMap) String() string {
	return fmt.Sprintf("%s %s->%d", p.Protocol, netip.AddrPortFrom(p.VIP, p.Port), p.TargetPort)
}

// ComparePortMaps orders mappings by VIP, protocol, port, then target.
func ComparePortMaps(a, b PortMap) int {
	if c := a.VIP.Compare(b.VIP); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Protocol, b.Protocol); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Port, b.Port); c != 0 {
		return c
	}
	return cmp.Compare(a.TargetPort, b.TargetPort)
}

// SortPortMaps returns a sorted, de-duplicated copy of ports, so that two
// equal sets always compare equal.
func SortPortMaps(ports []PortMap) []PortMap {
	p := slices.Clone(ports)
	slices.SortFunc(p, ComparePortMaps)
	return slices.Compact(p)
}

// WithPorts returns g with its port map set to a sorted copy of ports.
func (g Gateway) WithPorts(ports []PortMap) Gateway {
	g.Ports = SortPortMaps(ports)
	return g
}
