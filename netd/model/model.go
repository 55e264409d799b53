// Package model holds the desired state of a TLB gateway node as plain data:
// the IPIP tunnel interface (and the GUE receiver feeding it), the
// IPv6-in-IPv6 tunnel interface for IPv6 VIPs, the VIPs it serves, the TCP MSS it advertises for them (fixed, derived from the path
// MTU and the encapsulation, or off) and the port map from external VIP
// ports to local listener ports. It does no I/O and must not touch the
// kernel.
package model

import (
	"net/netip"
	"slices"
)

// DefaultTunnel is the kernel's IPIP fallback device, which receives every
// IPIP packet addressed to the node regardless of outer addresses.
const DefaultTunnel = "tunl0"

// DefaultTunnel6 is the kernel's IPv6-in-IPv6 fallback device (module
// ip6_tunnel), which receives every IPv6-in-IPv6 packet addressed to the
// node regardless of outer addresses: the directors' IPVS tunnel sends
// one to a gateway for every packet of an IPv6 VIP.
const DefaultTunnel6 = "ip6tnl0"

// IPv6Extra is what an IPv6 VIP's segments carry beyond an IPv4 VIP's,
// in bytes: the inner IPv6 header is 20 bytes longer than IPv4's, and so
// is the outer one (IPv6-in-IPv6, or GUE over IPv6). The MSS of IPv6 VIPs
// is the IPv4 VIPs' less this.
const IPv6Extra = 40

// MinMSS6 is the smallest MSS of an IPv6 VIP: the IPv6 minimum MTU (1280)
// less the 40-byte IPv6 and 20-byte TCP headers.
const MinMSS6 = 1280 - 40 - 20

// DefaultMSS is the MSS a gateway advertises for connections to its VIPs:
// a 1500-byte MTU minus the 20-byte outer IPIP header, minus 20 bytes of
// inner IPv4 header and 20 bytes of TCP header.
const DefaultMSS = 1500 - 20 - 40

// LabelSuffix is appended to the tunnel name (with a colon) to form the
// IPv4 address label that marks addresses netd added. The kernel limits
// labels to 15 bytes, so tunnel names are limited to MaxTunnelNameLen.
const LabelSuffix = "tlb"

// MaxTunnelNameLen is the longest tunnel name whose address label
// ("<name>:tlb") still fits the kernel's 15-byte limit.
const MaxTunnelNameLen = 15 - 1 - len(LabelSuffix)

// Gateway is the desired state of one gateway node.
type Gateway struct {
	// Tunnel is the name of the IPIP interface the IPv4 VIPs are bound on.
	Tunnel string
	// Tunnel6 is the name of the ip6tnl interface the IPv6 VIPs are bound
	// on (DefaultTunnel6); it is created and set up only while the
	// gateway has an IPv6 VIP.
	Tunnel6 string
	// VIPs are the addresses this gateway serves, IPv4 and IPv6, sorted
	// and unique.
	VIPs []netip.Addr
	// MSS is the largest TCP MSS the gateway advertises from its IPv4
	// VIPs (its IPv6 VIPs advertise MSS6); 0 writes no clamp. With MSSPolicy MSSFromMTU or MSSOff it is set by
	// Resolve before planning.
	MSS uint16
	// MSSPolicy says how MSS is chosen (the zero value: as given).
	MSSPolicy MSSPolicy
	// GUEPort, when not 0, is the UDP port of the node's GUE receiver
	// (FOU): the directors of a GUE L4 cluster send to it, and it hands
	// the inner IPIP packet to the tunnel.
	GUEPort uint16
	// Ports redirect external VIP ports to local listener ports, sorted
	// (see WithPorts). Every mapping's VIP is one of VIPs.
	Ports []PortMap
}

// NewGateway returns a Gateway with VIPs sorted and de-duplicated, so that
// two equal sets always compare equal.
func NewGateway(tunnel string, vips []netip.Addr, mss uint16) Gateway {
	v := slices.Clone(vips)
	slices.SortFunc(v, func(a, b netip.Addr) int { return a.Compare(b) })
	v = slices.Compact(v)
	return Gateway{Tunnel: tunnel, Tunnel6: DefaultTunnel6, VIPs: v, MSS: mss}
}

// HasIPv6 reports whether the gateway serves an IPv6 VIP, and so needs
// its IPv6 tunnel.
func (g Gateway) HasIPv6() bool {
	return slices.ContainsFunc(g.VIPs, func(a netip.Addr) bool { return a.Is6() })
}

// TunnelFor returns the interface a VIP of vip's family is bound on.
func (g Gateway) TunnelFor(vip netip.Addr) string {
	if vip.Is6() {
		return g.Tunnel6
	}
	return g.Tunnel
}

// MSS6 returns the MSS the gateway advertises from its IPv6 VIPs: MSS
// less IPv6Extra, at least MinMSS6; 0 when MSS is 0 (no clamp).
func (g Gateway) MSS6() uint16 { return IPv6MSS(g.MSS) }

// IPv6MSS returns the MSS of IPv6 VIPs for the IPv4 VIPs' mss: mss less
// IPv6Extra, at least MinMSS6; 0 (no clamp) for 0.
func IPv6MSS(mss uint16) uint16 {
	switch {
	case mss == 0:
		return 0
	case int(mss)-IPv6Extra < MinMSS6:
		return MinMSS6
	}
	return mss - IPv6Extra
}

// AddrLabel is the IPv4 address label netd puts on every IPv4 VIP it
// binds, and by which it recognises the addresses it may remove.
func (g Gateway) AddrLabel() string { return g.Tunnel + ":" + LabelSuffix }

// Mark6 is what marks the IPv6 VIPs netd binds, since IPv6 addresses carry
// no label: a /128 with the flags nodad and noprefixroute ("ip -6 addr"
// shows both). The kernel layer reports an IPv6 address bearing both with
// Mark6 as its label.
const Mark6 = "nodad,noprefixroute"

// LabelFor returns the label (Mark6 for IPv6) netd's VIP vip carries.
func (g Gateway) LabelFor(vip netip.Addr) string {
	if vip.Is6() {
		return Mark6
	}
	return g.AddrLabel()
}

// Sysctl is one kernel parameter under /proc/sys, with its key written as a
// path relative to /proc/sys (e.g. "net/ipv4/conf/all/arp_ignore").
type Sysctl struct {
	Key   string
	Value string
	// Why says what DSR needs the setting for.
	Why string
}

// Sysctls lists the kernel parameters a DSR gateway needs, in the order
// they are applied. The kernel uses the larger of the "all" and the
// per-interface value for each of the IPv4 ones. IPv6 needs no
// counterpart of arp_ignore and arp_announce (a node answers neighbour
// solicitations only for addresses of the receiving interface, and takes
// a solicitation's source from the outgoing one) nor of rp_filter (IPv6
// has none): only the IPv6 tunnel's own, while there is an IPv6 VIP.
func (g Gateway) Sysctls() []Sysctl {
	out := g.sysctls4()
	if g.HasIPv6() {
		dev := "net/ipv6/conf/" + g.Tunnel6 + "/"
		out = append(out,
			Sysctl{Key: dev + "disable_ipv6", Value: "0",
				Why: "decapsulated packets arrive on the IPv6 tunnel; with IPv6 off there the kernel drops them"},
			Sysctl{Key: dev + "accept_dad", Value: "0",
				Why: "never run duplicate address detection for VIPs: every gateway holds the same VIP, and a VIP is usable at once"},
		)
	}
	return out
}

func (g Gateway) sysctls4() []Sysctl {
	dev := "net/ipv4/conf/" + g.Tunnel + "/"
	return []Sysctl{
		{Key: "net/ipv4/conf/all/arp_ignore", Value: "1",
			Why: "answer ARP only for addresses on the receiving interface, never for VIPs on the tunnel"},
		{Key: "net/ipv4/conf/all/arp_announce", Value: "2",
			Why: "never use a VIP as the source of an ARP request"},
		{Key: dev + "arp_ignore", Value: "1", Why: "as for all, on the tunnel itself"},
		{Key: dev + "arp_announce", Value: "2", Why: "as for all, on the tunnel itself"},
		{Key: dev + "rp_filter", Value: "2",
			Why: "loose reverse-path check: decapsulated packets arrive on the tunnel from clients routed elsewhere; " +
				"2 is the maximum, so it wins over any value in all without changing other interfaces"},
	}
}
