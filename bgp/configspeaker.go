package bgp

import (
	"fmt"
	"net/netip"
)

// isHostIPv4 reports whether s is an IPv4 address other than 0.0.0.0.
func isHostIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4() && !a.IsUnspecified()
}

// checkSpeaker checks the director's own identity: ASN, router ID, listen
// port and next hop.
func (c Config) checkSpeaker(ps *problems) {
	if c.LocalASN == 0 {
		ps.add("localASN", "must be set")
	}
	if !isHostIPv4(c.RouterID) {
		ps.add("routerID", "%q is not an IPv4 address", c.RouterID)
	}
	if c.ListenPort != NoListen && (c.ListenPort < 1 || c.ListenPort > 65535) {
		ps.add("listenPort", "%d is not a port (use -1 to only dial out)", c.ListenPort)
	}
	if c.NextHop != "" && !isHostIPv4(c.NextHop) {
		ps.add("nextHop", "%q is not an IPv4 address", c.NextHop)
	}
	if c.NextHopIPv6 != "" {
		a, err := netip.ParseAddr(c.NextHopIPv6)
		if err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" || !a.IsGlobalUnicast() {
			ps.add("nextHopIPv6", "%q is not a global unicast IPv6 address (a link-local next hop needs a session over IPv6)", c.NextHopIPv6)
		}
	}
	switch {
	case !c.GracefulRestart && c.GracefulRestartSeconds != 0:
		ps.add("gracefulRestartSeconds", "set without gracefulRestart: true")
	case c.GracefulRestartSeconds > maxGracefulRestartSeconds:
		ps.add("gracefulRestartSeconds", "%d is above the %d the capability carries", c.GracefulRestartSeconds, maxGracefulRestartSeconds)
	}
}

// checkAllowedPrefixes checks that the VIP ranges are present, canonical
// and narrower than the default route, and that IPv6 ones have the next
// hop they need (nextHopIPv6).
func (c Config) checkAllowedPrefixes(ps *problems) {
	if len(c.AllowedPrefixes) == 0 {
		ps.add("allowedPrefixes", "must list at least one VIP range")
	}
	for i, s := range c.AllowedPrefixes {
		field := fmt.Sprintf("allowedPrefixes[%d]", i)
		p, err := netip.ParsePrefix(s)
		switch {
		case err != nil:
			ps.add(field, "%q is not a prefix", s)
		case p.Addr().Is4In6() || p.Addr().Zone() != "":
			ps.add(field, "%q is not a plain IPv4 or IPv6 prefix", s)
		case p != p.Masked():
			ps.add(field, "%q has host bits set (did you mean %s?)", s, p.Masked())
		case p.Bits() == 0:
			ps.add(field, "%q would allow announcing a default route", s)
		case p.Addr().Is6() && c.NextHopIPv6 == "":
			ps.add(field, "%s is IPv6, and nextHopIPv6 is not set: IPv6 routes go over the IPv4 sessions (MP-BGP) and need this director's IPv6 address as their next hop", p)
		}
	}
}

// announcesIPv6 reports whether the sessions carry IPv6 unicast too.
func (c Config) announcesIPv6() bool { return c.NextHopIPv6 != "" }

// allowedRanges returns the parsed AllowedPrefixes of a validated Config.
func (c Config) allowedRanges() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(c.AllowedPrefixes))
	for _, s := range c.AllowedPrefixes {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}
