package health

import (
	"fmt"
	"net/netip"
	"slices"
)

// VIPTable maps each VIP to the real servers behind it (over all its ports).
type VIPTable map[netip.Addr][]netip.Addr

// UpSource says whether a real server is up. *Checker implements it.
type UpSource interface {
	Up(realServer netip.Addr) bool
}

// VIPHealth is the health of one VIP: healthy while at least one of its
// real servers is up.
type VIPHealth struct {
	VIP     netip.Addr
	Healthy int
	Total   int
}

// Up reports whether the VIP has at least one healthy real server.
func (v VIPHealth) Up() bool { return v.Healthy > 0 }

// Evaluate returns the health of every VIP in vips, sorted by VIP.
func Evaluate(vips VIPTable, up UpSource) []VIPHealth {
	out := make([]VIPHealth, 0, len(vips))
	for vip, rss := range vips {
		h := VIPHealth{VIP: vip}
		seen := map[netip.Addr]bool{}
		for _, rs := range rss {
			if seen[rs] {
				continue
			}
			seen[rs] = true
			h.Total++
			if up.Up(rs) {
				h.Healthy++
			}
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b VIPHealth) int { return a.VIP.Compare(b.VIP) })
	return out
}

// Readiness is the director's readiness: IPVS programmed and at least one
// healthy real server. The reason says what is missing.
func Readiness(ipvsProgrammed bool, vips []VIPHealth) (bool, string) {
	if !ipvsProgrammed {
		return false, "IPVS not programmed yet"
	}
	total := 0
	for _, v := range vips {
		if v.Healthy > 0 {
			return true, ""
		}
		total += v.Total
	}
	if total == 0 {
		return false, "no real servers configured"
	}
	return false, fmt.Sprintf("none of %d real servers is healthy", total)
}

// Announcement returns the prefixes a director should announce. Not ready:
// none. Mode AnnounceVIPs: a /32 per VIP that is up. Mode AnnounceSubnets:
// every subnet that holds at least one VIP that is up (a subnet with only
// dead VIPs would draw traffic that cannot be served).
func Announcement(ready bool, mode string, subnets []netip.Prefix, vips []VIPHealth) []netip.Prefix {
	if !ready {
		return nil
	}
	var out []netip.Prefix
	switch mode {
	case AnnounceVIPs:
		for _, v := range vips {
			if v.Up() {
				out = append(out, netip.PrefixFrom(v.VIP, v.VIP.BitLen()))
			}
		}
	default:
		for _, s := range subnets {
			if slices.ContainsFunc(vips, func(v VIPHealth) bool { return v.Up() && s.Contains(v.VIP) }) {
				out = append(out, s.Masked())
			}
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return slices.Compact(out)
}
