// Package model holds the desired state of a TLB gateway node as plain data:
// the IPIP tunnel interface (and the GUE receiver feeding it), the VIPs it
// serves, the TCP MSS it advertises for them (fixed, derived from the path
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
	// Tunnel is the name of the IPIP interface the VIPs are bound on.
	Tunnel string
	// VIPs are the IPv4 addresses this gateway serves, sorted and unique.
	VIPs []netip.Addr
	// MSS is the largest TCP MSS the gateway advertises from its VIPs; 0
	// writes no clamp. With MSSPolicy MSSFromMTU or MSSOff it is set by
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
	return Gateway{Tunnel: tunnel, VIPs: v, MSS: mss}
}

// AddrLabel is the IPv4 address label netd puts on every VIP it binds, and
// by which it recognises the addresses it may remove.
func (g Gateway) AddrLabel() string { return g.Tunnel + ":" + LabelSuffix }

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
// per-interface value for each of them.
func (g Gateway) Sysctls() []Sysctl {
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
