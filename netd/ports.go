package netd

import (
	"net/netip"

	"github.com/tlbproject/tlb/netd/model"
)

// TunnelState is what the kernel reports about the tunnel interface.
type TunnelState struct {
	// Exists is false when no link has the tunnel's name.
	Exists bool
	// Kind is the link type ("ipip" for a usable IPv4 tunnel, "ip6tnl"
	// for an IPv6 one).
	Kind string
	// Up is true when the link is administratively up.
	Up bool
}

// TunnelAddr is one address on a tunnel with its label: for an IPv6
// address, which has none, model.Mark6 when it bears netd's mark (the
// flags nodad and noprefixroute), "" otherwise.
type TunnelAddr struct {
	Prefix netip.Prefix
	Label  string
}

// TunnelLinks reads and changes the tunnel interface and its addresses in
// one network namespace.
type TunnelLinks interface {
	// Tunnel reports the link called name.
	Tunnel(name string) (TunnelState, error)
	// CreateTunnel creates an IPIP link called name; a link that already
	// exists (e.g. tunl0, made when the ipip module loads) is adopted.
	CreateTunnel(name string) error
	// CreateTunnel6 creates an ip6tnl link (IPv6-in-IPv6) without
	// endpoints called name; an existing one (ip6tnl0, made when the
	// ip6_tunnel module loads) is adopted.
	CreateTunnel6(name string) error
	// SetUp brings the link up.
	SetUp(name string) error
	// Addrs lists the link's addresses, IPv4 and IPv6.
	Addrs(name string) ([]TunnelAddr, error)
	// ReplaceAddr adds (or replaces) an address on the link; an IPv6 one
	// with netd's mark (model.Mark6) and without duplicate address
	// detection.
	ReplaceAddr(name string, a TunnelAddr) error
	// DelAddr removes an address from the link.
	DelAddr(name string, a TunnelAddr) error
	// RouteMTU returns the MTU of the link of the node's IPv4 default
	// route (the smallest, with several; without one, of the links with a
	// global IPv4 address): the path MTU an MSS is derived from when none
	// is configured.
	RouteMTU() (int, error)
	// FOUReceivers lists the node's FOU receivers of one family (IPv6
	// when ipv6): UDP port to encapsulation ("gue" or "direct").
	FOUReceivers(ipv6 bool) (map[uint16]string, error)
	// AddGUEReceiver adds a GUE receiver on the UDP port, for GUE over
	// IPv6 when ipv6.
	AddGUEReceiver(port uint16, ipv6 bool) error
}

// Sysctls reads and writes kernel parameters by their /proc/sys path.
type Sysctls interface {
	Get(key string) (string, error)
	Set(key, value string) error
}

// ClampState is what the kernel holds of netd's nftables table: the MSS
// clamp and the port map.
type ClampState struct {
	// Intact is true when netd's table exists with exactly the shape netd
	// builds: its set of VIPs, its chain and one rule for MSS, and (only
	// when there are mappings) a nat chain with one rule per mapping.
	Intact bool
	// MSS is the MSS the rule sets, 0 when the chain holds no rule (the
	// clamp is off) (valid when Intact).
	MSS uint16
	// VIPs are the elements of the set (valid when Intact).
	VIPs []netip.Addr
	// Ports are the port mappings in the nat chain, sorted (valid when
	// Intact).
	Ports []model.PortMap
}

// MSSClamp maintains netd's nftables table: the rule that lowers the MSS
// the gateway advertises on TCP handshakes from its VIPs, and the port map
// that redirects external VIP ports to local listener ports.
type MSSClamp interface {
	// State reads the table back from the kernel.
	State() (ClampState, error)
	// Rebuild replaces netd's table atomically with one clamping to mss
	// (0: an empty clamp chain) for the given VIPs and redirecting the
	// given ports.
	Rebuild(mss uint16, vips []netip.Addr, ports []model.PortMap) error
	// UpdateVIPs adds and removes VIPs in the clamp's set in one batch.
	UpdateVIPs(add, del []netip.Addr) error
}
