package model

import (
	"fmt"
	"strconv"
)

// EncapType is how a director tunnels a service's packets to its real
// servers.
type EncapType string

// Encapsulations a director programs.
const (
	// EncapIPIP is IPv4-in-IPv4 (the default): every packet from one
	// director to one gateway has the same outer addresses.
	EncapIPIP EncapType = "ipip"
	// EncapGUE is Generic UDP Encapsulation (IPVS tun_type gue, kernel >=
	// 5.3): the outer UDP source port carries a hash of the flow, so NICs
	// and routers between director and gateway spread flows.
	EncapGUE EncapType = "gue"
)

// Per-packet overhead of each encapsulation of an IPv4 VIP, in bytes: what
// a gateway's MSS budget must leave room for. An IPv6 VIP's packets are
// tunnelled over IPv6 (IPv6-in-IPv6, or GUE over IPv6), whose outer header
// is 20 bytes larger.
const (
	// IPIPOverhead is the outer IPv4 header.
	IPIPOverhead = 20
	// GUEOverhead is the outer IPv4 header, the UDP header and the 4-byte
	// GUE header.
	GUEOverhead = 20 + 8 + 4
)

// Encap is a service's tunnel encapsulation. The zero value is IPIP.
type Encap struct {
	// Type is EncapIPIP or EncapGUE; "" means EncapIPIP.
	Type EncapType
	// Port is, for GUE, the UDP port the gateways' FOU receiver listens
	// on; 0 for IPIP.
	Port uint16
}

// GUE returns the GUE encapsulation to port.
func GUE(port uint16) Encap { return Encap{Type: EncapGUE, Port: port} }

// IsGUE reports whether e is GUE.
func (e Encap) IsGUE() bool { return e.Type == EncapGUE }

// Normal returns e with "ipip" written as the zero value, so that equal
// encapsulations compare equal.
func (e Encap) Normal() Encap {
	if e.Type == EncapIPIP {
		e.Type = ""
	}
	return e
}

// Overhead returns the bytes e adds to every packet.
func (e Encap) Overhead() int {
	if e.IsGUE() {
		return GUEOverhead
	}
	return IPIPOverhead
}

// String renders "ipip" or "gue:6080".
func (e Encap) String() string {
	if e.IsGUE() {
		return string(EncapGUE) + ":" + strconv.Itoa(int(e.Port))
	}
	return string(EncapIPIP)
}

// Check returns the field ("type" or "port") and the reason e is invalid,
// or "" when it is valid.
func (e Encap) Check() (field, reason string) {
	switch e.Type {
	case "", EncapIPIP:
		if e.Port != 0 {
			return "port", fmt.Sprintf("%d is set but only gue takes a port", e.Port)
		}
	case EncapGUE:
		if e.Port == 0 {
			return "port", "gue needs the gateways' FOU receiver port, 1..65535"
		}
	default:
		return "type", fmt.Sprintf("%q is not one of ipip, gue", e.Type)
	}
	return "", ""
}
