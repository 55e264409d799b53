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

// L7Health is the state of one L7 service (an application behind the
// VIP's gateways): how many of its backends are ready.
type L7Health struct {
	Name  string
	Ready int
}

// L7Table maps each VIP to its L7 services; a VIP that is absent has none.
type L7Table map[netip.Addr][]L7Health

// VIPHealth is the health of one VIP: up while at least one of its real
// servers (gateways) is up and, if it has L7 services, at least one of
// them has a ready backend.
type VIPHealth struct {
	VIP     netip.Addr
	Healthy int
	Total   int
	// L7Services is how many L7 services the VIP has; L7Ready how many
	// of them have at least one ready backend.
	L7Services int
	L7Ready    int
}

// Up reports whether the VIP can serve: a healthy gateway, and a ready
// backend behind it when the VIP has L7 services.
func (v VIPHealth) Up() bool { return v.GatewaysUp() && (v.L7Services == 0 || v.L7Ready > 0) }

// GatewaysUp reports whether the VIP has at least one healthy real server.
func (v VIPHealth) GatewaysUp() bool { return v.Healthy > 0 }

// Reason says why the VIP is down ("" when it is up).
func (v VIPHealth) Reason() string {
	switch {
	case !v.GatewaysUp():
		return "no healthy gateway"
	case !v.Up():
		return "no L7 service of the VIP has a ready backend"
	}
	return ""
}

// Evaluate returns the health of every VIP in vips, sorted by VIP; l7
// gives the VIPs' L7 services (nil: none has any).
func Evaluate(vips VIPTable, up UpSource, l7 L7Table) []VIPHealth {
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
		for _, s := range l7[vip] {
			h.L7Services++
			if s.Ready > 0 {
				h.L7Ready++
			}
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b VIPHealth) int { return a.VIP.Compare(b.VIP) })
	return out
}

// Readiness is the director's readiness: IPVS programmed and, when it
// serves any VIP, at least one healthy real server. A director with no
// VIP (an L4 cluster without a Service yet) is ready, so that a rollout
// of it completes; it announces nothing and GTM knows no VIP, which is
// the truth. The reason says what is missing.
func Readiness(ipvsProgrammed bool, vips []VIPHealth) (bool, string) {
	if !ipvsProgrammed {
		return false, "IPVS not programmed yet"
	}
	if len(vips) == 0 {
		return true, ""
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
// none. Mode AnnounceVIPs: a /32 per VIP that is up (L7 state included, so
// BGP and GTM agree). Mode AnnounceSubnets: every subnet that holds at
// least one VIP with a healthy gateway (a subnet with only dead gateways
// would draw traffic that cannot be served). A subnet route is shared by
// many VIPs, so the L7 state of one application does not withdraw it:
// GTM and per-VIP mode are where that shows.
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
			if slices.ContainsFunc(vips, func(v VIPHealth) bool { return v.GatewaysUp() && s.Contains(v.VIP) }) {
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
