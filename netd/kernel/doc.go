// Package kernel implements netd's kernel interfaces on Linux: the tunnel
// link and its addresses through a netlink handle, sysctls through
// /proc/sys, and the MSS clamp through nftables.
//
// Each type works in the network namespace it is given and touches only
// the objects named to it: one link, the listed sysctl keys, one nftables
// table. It never flushes a ruleset or lists and changes other links.
package kernel
