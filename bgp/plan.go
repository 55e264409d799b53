package bgp

import (
	"fmt"
	"net/netip"
	"slices"
)

// Plan is the difference between the announced and the desired prefixes.
type Plan struct {
	// ToAdvertise are desired and not yet announced.
	ToAdvertise []netip.Prefix
	// ToWithdraw are announced and no longer desired.
	ToWithdraw []netip.Prefix
	// ToUpdate are announced and still desired, with other attributes
	// (communities, local preference): sent again.
	ToUpdate []netip.Prefix
	// ToKeep are announced and still desired as they are.
	ToKeep []netip.Prefix
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool {
	return len(p.ToAdvertise) == 0 && len(p.ToWithdraw) == 0 && len(p.ToUpdate) == 0
}

// NewPlan computes the plan that takes announced to desired. Output slices
// are sorted so plans compare and log stably.
func NewPlan(announced, desired []netip.Prefix) Plan {
	have := make(map[netip.Prefix]bool, len(announced))
	for _, p := range announced {
		have[p] = true
	}
	want := make(map[netip.Prefix]bool, len(desired))
	var plan Plan
	for _, p := range desired {
		if want[p] {
			continue
		}
		want[p] = true
		if have[p] {
			plan.ToKeep = append(plan.ToKeep, p)
		} else {
			plan.ToAdvertise = append(plan.ToAdvertise, p)
		}
	}
	for p := range have {
		if !want[p] {
			plan.ToWithdraw = append(plan.ToWithdraw, p)
		}
	}
	for _, s := range [][]netip.Prefix{plan.ToAdvertise, plan.ToWithdraw, plan.ToKeep} {
		slices.SortFunc(s, comparePrefix)
	}
	return plan
}

func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

// CheckAllowed returns an error naming every prefix in desired that is not
// a canonical prefix inside one of the allowed ranges.
func CheckAllowed(allowed, desired []netip.Prefix) error {
	var refused []string
	for _, p := range desired {
		if reason := refuse(allowed, p); reason != "" {
			refused = append(refused, fmt.Sprintf("%s (%s)", p, reason))
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("refused to announce %v: %w", refused, ErrNotAllowed)
	}
	return nil
}

func refuse(allowed []netip.Prefix, p netip.Prefix) string {
	switch {
	case !p.IsValid():
		return "invalid prefix"
	case p.Addr().Is4In6() || p.Addr().Zone() != "":
		return "not a plain IPv4 or IPv6 prefix"
	case p != p.Masked():
		return "host bits set"
	}
	for _, r := range allowed {
		if r.Bits() <= p.Bits() && r.Contains(p.Addr()) {
			return ""
		}
	}
	return "outside the allowed VIP ranges"
}
