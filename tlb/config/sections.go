package config

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/tlb/health"
)

// sections parses the `bgp:` and `health:` sections with their own
// packages (strict, defaults applied) and checks what ties them to the
// director's settings: with BGP, director.vipRanges are the subnets
// announced, so they are required and must lie inside
// bgp.allowedPrefixes (or the speaker would refuse them at run time).
// With withServices false (services and VIP ranges come from the API
// server) the VIP ranges are not known here; the speaker refuses, at
// announce time, any outside bgp.allowedPrefixes.
func sections(doc fileDoc, d Director, withServices bool, bad func(field, format string, args ...any)) (*bgp.Config, *health.Config) {
	var bc *bgp.Config
	if present(doc.BGP) {
		c, err := bgp.Parse(doc.BGP)
		if err != nil {
			report("bgp", err, bad)
		} else {
			bc = &c
			if withServices {
				checkAnnounced(c, d, bad)
			}
		}
	}
	var hc *health.Config
	if present(doc.Health) {
		c, err := health.Parse(doc.Health)
		if err != nil {
			report("health", err, bad)
		} else {
			hc = &c
		}
	}
	return bc, hc
}

// present is false for an absent section and for `bgp: null`.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// report adds one error per line of a section parser's error; those
// already name the section and the field ("bgp config: peers[0].asn: ...").
func report(section string, err error, bad func(field, format string, args ...any)) {
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		line = strings.TrimPrefix(line, section+" config: ")
		bad(section, "%s", line)
	}
}

func checkAnnounced(c bgp.Config, d Director, bad func(field, format string, args ...any)) {
	if len(d.VIPRanges) == 0 {
		bad("director.vipRanges", "required with a bgp section (they are the subnets announced)")
		return
	}
	var allowed []netip.Prefix
	for _, s := range c.AllowedPrefixes {
		if p, err := netip.ParsePrefix(s); err == nil {
			allowed = append(allowed, p.Masked())
		}
	}
	for i, r := range d.VIPRanges {
		inside := slices.ContainsFunc(allowed, func(a netip.Prefix) bool { return a.Bits() <= r.Bits() && a.Contains(r.Addr()) })
		if !inside {
			bad(fmt.Sprintf("director.vipRanges[%d]", i), "%s is outside bgp.allowedPrefixes %v, so it could never be announced", r, c.AllowedPrefixes)
		}
	}
}
