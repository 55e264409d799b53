package model

// Per-packet overhead of the directors' encapsulations, in bytes: what the
// MSS budget must leave room for.
const (
	// IPIPOverhead is the outer IPv4 header.
	IPIPOverhead = 20
	// GUEOverhead is the outer IPv4 header, the UDP header and the 4-byte
	// GUE header.
	GUEOverhead = 20 + 8 + 4
	// tcpIPv4Headers are the inner IPv4 and TCP headers without options.
	tcpIPv4Headers = 20 + 20
)

// MinMSS is the IPv4 minimum every host must accept; a derived MSS is
// never lower.
const MinMSS = 536

// MSSMode says how a gateway's MSS clamp is chosen.
type MSSMode string

// MSS modes.
const (
	// MSSFixed clamps to Gateway.MSS as given (the zero value).
	MSSFixed MSSMode = ""
	// MSSFromMTU derives the clamp from the path MTU and the
	// encapsulation: MTU - overhead - 40.
	MSSFromMTU MSSMode = "auto"
	// MSSOff writes no clamp at all (the fabric carries the encapsulated
	// full-size packets, or something else clamps).
	MSSOff MSSMode = "off"
)

// MSSPolicy is how the clamp's MSS is chosen.
type MSSPolicy struct {
	Mode MSSMode
	// MTU is the path MTU MSSFromMTU derives from; 0 means the MTU of the
	// link of the node's IPv4 default route, read at every reconcile.
	MTU int
}

// Overhead is the bytes the directors' encapsulation adds to every packet
// the gateway receives: GUE's when it receives GUE (a node receiving GUE
// may receive IPIP too, so the larger one counts), IPIP's otherwise.
func (g Gateway) Overhead() int {
	if g.GUEPort != 0 {
		return GUEOverhead
	}
	return IPIPOverhead
}

// DeriveMSS returns the MSS that keeps an encapsulated full-size segment
// within mtu: mtu - overhead - 40 (inner IPv4 and TCP headers), at least
// MinMSS.
func DeriveMSS(mtu, overhead int) uint16 {
	mss := mtu - overhead - tcpIPv4Headers
	if mss < MinMSS {
		return MinMSS
	}
	if mss > 0xffff {
		return 0xffff
	}
	return uint16(mss)
}

// NeedsLinkMTU reports whether resolving g needs the MTU of the node's
// default-route link.
func (g Gateway) NeedsLinkMTU() bool { return g.MSSPolicy.Mode == MSSFromMTU && g.MSSPolicy.MTU == 0 }

// Resolve returns g with MSS set by its policy: derived from the path MTU
// (the policy's, or linkMTU), 0 when the clamp is off, as given when fixed.
func (g Gateway) Resolve(linkMTU int) Gateway {
	switch g.MSSPolicy.Mode {
	case MSSFromMTU:
		mtu := g.MSSPolicy.MTU
		if mtu == 0 {
			mtu = linkMTU
		}
		g.MSS = DeriveMSS(mtu, g.Overhead())
	case MSSOff:
		g.MSS = 0
	}
	return g
}
