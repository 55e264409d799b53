// Package netd reconciles a gateway node's kernel state for direct server
// return (DSR) behind TLB directors: the IPIP tunnel interface with the
// IPv4 VIPs bound as /32 addresses on it, the ip6tnl interface with the
// IPv6 VIPs bound as /128 addresses, the sysctls DSR needs, the MSS clamp that
// keeps uploads inside the tunnel's MTU and the port map that redirects
// external VIP ports (443) to unprivileged listener ports (10443).
//
// It owns only what it creates: addresses on the tunnels that carry its
// address label (IPv4) or its mark (IPv6: nodad and noprefixroute), the
// sysctls listed by the model and one nftables table.
// Addresses without its label, other links, other nftables tables and any
// other sysctl are never touched. Kernel access goes through the narrow
// interfaces declared in ports.go; real implementations live in
// netd/kernel.
package netd
