// Package netd reconciles a gateway node's kernel state for direct server
// return (DSR) behind TLB directors: the IPIP tunnel interface, the VIPs
// bound as /32 addresses on it, the sysctls DSR needs, the MSS clamp that
// keeps uploads inside the tunnel's MTU and the port map that redirects
// external VIP ports (443) to unprivileged listener ports (10443).
//
// It owns only what it creates: addresses on the tunnel that carry its
// address label, the sysctls listed by the model and one nftables table.
// Addresses without its label, other links, other nftables tables and any
// other sysctl are never touched. Kernel access goes through the narrow
// interfaces declared in ports.go; real implementations live in
// netd/kernel.
package netd
