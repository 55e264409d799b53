// Package ipvstun writes and reads what github.com/moby/ipvs v1.1.0 leaves
// out of an IPVS real server: its tunnel encapsulation
// (IPVS_DEST_ATTR_TUN_TYPE, IPVS_DEST_ATTR_TUN_PORT and
// IPVS_DEST_ATTR_TUN_FLAGS, kernel >= 5.3), so that a director can send a
// service's packets to its gateways in GUE (UDP) rather than IPIP.
//
// It speaks the kernel's IPVS generic netlink family for three commands
// only: add a real server (IPVS_CMD_NEW_DEST), change one
// (IPVS_CMD_SET_DEST) and list a service's real servers with their tunnel
// attributes (IPVS_CMD_GET_DEST). Services, connections and everything
// else stay with moby/ipvs. The encoding (encode.go) is pure and
// unit-tested; handle.go holds the socket, bound to one network namespace.
package ipvstun
