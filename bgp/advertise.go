package bgp

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// AdvertisementConfig says how the prefixes announced inside some VIP
// ranges are sent: with which communities and local preference, and
// whether they are aggregated. It is the file's counterpart of a VIPPool's
// spec.bgp; a prefix that no advertisement covers is sent as it is, with
// no community.
type AdvertisementConfig struct {
	// Name, when set, names the advertisement in errors (a VIPPool's
	// advertisement is named after it).
	Name string `json:"name,omitempty"`
	// Prefixes are the VIP ranges this applies to. Each lies inside
	// allowedPrefixes and overlaps no other advertisement's.
	Prefixes []string `json:"prefixes"`
	// Communities are standard communities (RFC 1997), "ASN:VALUE" with
	// both parts 0..65535, attached to every route of the ranges.
	Communities []string `json:"communities,omitempty"`
	// LargeCommunities are large communities (RFC 8092),
	// "GLOBAL:LOCAL1:LOCAL2" with each part 0..4294967295.
	LargeCommunities []string `json:"largeCommunities,omitempty"`
	// LocalPreference is the LOCAL_PREF of the routes. It only reaches
	// iBGP peers (peers whose asn equals localASN): BGP never sends it
	// over eBGP, where the router applies its own.
	LocalPreference *uint32 `json:"localPreference,omitempty"`
	// AggregationLength, when set, announces every prefix of the ranges
	// as its covering prefix of this length (a VIP's /32 or a subnet
	// becomes, say, the /24 holding it), once however many it covers.
	// It is at least the length of each of Prefixes, so the aggregate
	// stays inside the range, and at most 32 (128 for IPv6 ranges).
	AggregationLength uint8 `json:"aggregationLength,omitempty"`
}

// advertisement is a validated AdvertisementConfig.
type advertisement struct {
	ranges    []netip.Prefix
	attrs     routeAttrs
	aggregate int // 0: none
}

// routeAttrs are the attributes a route is sent with beyond origin and
// next hop. It is comparable, so a change of attributes is seen.
type routeAttrs struct {
	// communities and large are the canonical, comma-joined lists.
	communities, large string
	localPref          uint32
	hasLocalPref       bool
}

// largeCommunity is one RFC 8092 community.
type largeCommunity struct{ global, local1, local2 uint32 }

// parseAdvertisements checks advs against the allowed ranges. Errors
// name the field as field(i, name) spells it.
func parseAdvertisements(advs []AdvertisementConfig, allowed []netip.Prefix, field func(i int, name string) string) ([]advertisement, []error) {
	var out []advertisement
	var errs []error
	bad := func(f, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", f, fmt.Sprintf(format, args...)))
	}
	var seen []netip.Prefix
	for i, a := range advs {
		adv := advertisement{aggregate: int(a.AggregationLength)}
		if len(a.Prefixes) == 0 {
			bad(field(i, "prefixes"), "must list at least one VIP range")
		}
		for j, s := range a.Prefixes {
			f := field(i, fmt.Sprintf("prefixes[%d]", j))
			p, err := netip.ParsePrefix(s)
			switch {
			case err != nil:
				bad(f, "%q is not a prefix", s)
				continue
			case p != p.Masked():
				bad(f, "%q has host bits set (did you mean %s?)", s, p.Masked())
				continue
			case !slices.ContainsFunc(allowed, func(r netip.Prefix) bool { return r.Bits() <= p.Bits() && r.Contains(p.Addr()) }):
				bad(f, "%s is outside allowedPrefixes %v", p, allowed)
				continue
			}
			if k := slices.IndexFunc(seen, p.Overlaps); k >= 0 {
				bad(f, "%s overlaps %s of another advertisement", p, seen[k])
				continue
			}
			if adv.aggregate != 0 && (adv.aggregate < p.Bits() || adv.aggregate > p.Addr().BitLen()) {
				bad(field(i, "aggregationLength"), "%d must be between the length of %s and %d, so the aggregate stays inside it", adv.aggregate, p, p.Addr().BitLen())
			}
			seen = append(seen, p)
			adv.ranges = append(adv.ranges, p)
		}
		var cs []string
		for j, s := range a.Communities {
			c, err := ParseCommunity(s)
			if err != nil {
				bad(field(i, fmt.Sprintf("communities[%d]", j)), "%v", err)
				continue
			}
			cs = append(cs, formatCommunity(c))
		}
		var ls []string
		for j, s := range a.LargeCommunities {
			c, err := parseLargeCommunity(s)
			if err != nil {
				bad(field(i, fmt.Sprintf("largeCommunities[%d]", j)), "%v", err)
				continue
			}
			ls = append(ls, c.String())
		}
		adv.attrs = routeAttrs{communities: canonical(cs), large: canonical(ls)}
		if a.LocalPreference != nil {
			adv.attrs.localPref, adv.attrs.hasLocalPref = *a.LocalPreference, true
		}
		out = append(out, adv)
	}
	return out, errs
}

// canonical sorts and de-duplicates ss and joins them with commas.
func canonical(ss []string) string {
	slices.Sort(ss)
	return strings.Join(slices.Compact(ss), ",")
}

// ParseCommunity reads a standard community "ASN:VALUE" (both 0..65535).
func ParseCommunity(s string) (uint32, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 2 {
		return 0, fmt.Errorf("%q is not ASN:VALUE", s)
	}
	var v [2]uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("%q: %q is not a number 0..65535", s, p)
		}
		v[i] = n
	}
	return uint32(v[0]<<16 | v[1]), nil
}

func formatCommunity(c uint32) string { return fmt.Sprintf("%d:%d", c>>16, c&0xffff) }

// parseLargeCommunity reads "GLOBAL:LOCAL1:LOCAL2" (each 0..4294967295).
func parseLargeCommunity(s string) (largeCommunity, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return largeCommunity{}, fmt.Errorf("%q is not GLOBAL:LOCAL1:LOCAL2", s)
	}
	var v [3]uint32
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return largeCommunity{}, fmt.Errorf("%q: %q is not a number 0..4294967295", s, p)
		}
		v[i] = uint32(n)
	}
	return largeCommunity{v[0], v[1], v[2]}, nil
}

func (c largeCommunity) String() string { return fmt.Sprintf("%d:%d:%d", c.global, c.local1, c.local2) }

// routes maps the prefixes to announce to the routes sent: each prefix
// inside an advertisement's range takes its attributes and, with
// aggregation, becomes its covering prefix; the others go as they are.
// Several prefixes may make one aggregate.
func routes(advs []advertisement, prefixes []netip.Prefix) map[netip.Prefix]routeAttrs {
	out := make(map[netip.Prefix]routeAttrs, len(prefixes))
	for _, p := range prefixes {
		var attrs routeAttrs
		for _, a := range advs {
			if !slices.ContainsFunc(a.ranges, func(r netip.Prefix) bool { return r.Bits() <= p.Bits() && r.Contains(p.Addr()) }) {
				continue
			}
			attrs = a.attrs
			if a.aggregate != 0 && a.aggregate < p.Bits() {
				p = netip.PrefixFrom(p.Addr(), a.aggregate).Masked()
			}
			break
		}
		out[p] = attrs
	}
	return out
}
