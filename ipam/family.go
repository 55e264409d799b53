package ipam

import (
	"net/netip"
	"slices"
)

// Family is the IP address family of a VIP.
type Family uint8

// The families. AnyFamily, the zero value, takes the first free address of
// either family, as a request naming no family does.
const (
	AnyFamily Family = 0
	IPv4      Family = 4
	IPv6      Family = 6
)

// FamilyOf returns the family of addr.
func FamilyOf(addr netip.Addr) Family {
	if addr.Is4() {
		return IPv4
	}
	return IPv6
}

// String returns the family as Kubernetes spells it in spec.ipFamilies.
func (f Family) String() string {
	switch f {
	case IPv4:
		return "IPv4"
	case IPv6:
		return "IPv6"
	}
	return "any family"
}

// holds reports whether an address of family has (any address for
// AnyFamily).
func (f Family) holds(addr netip.Addr) bool {
	return f == AnyFamily || FamilyOf(addr) == f
}

// StackPolicy says how many families a Service's VIPs span, as its
// spec.ipFamilyPolicy does.
type StackPolicy uint8

// The policies, named as Kubernetes names them.
const (
	// SingleStack gives one VIP, of the first requested family.
	SingleStack StackPolicy = iota
	// PreferDualStack gives one VIP per requested family when one L4
	// cluster has pools of both families with free addresses, else one
	// VIP of the first family that can be served.
	PreferDualStack
	// RequireDualStack gives one VIP per requested family or nothing.
	RequireDualStack
)

// String returns the policy as Kubernetes spells it.
func (p StackPolicy) String() string {
	switch p {
	case PreferDualStack:
		return "PreferDualStack"
	case RequireDualStack:
		return "RequireDualStack"
	}
	return "SingleStack"
}

// slots returns the families req asks one VIP each for, in order: the
// families of the requested addresses when it names no family, one of any
// family when it names neither, and the first family only for SingleStack.
func (req Request) slots() []Family {
	fams := slices.Clone(req.Families)
	if len(fams) == 0 {
		for _, addr := range req.Addresses {
			fams = append(fams, FamilyOf(addr))
		}
	}
	if len(fams) == 0 {
		return []Family{AnyFamily}
	}
	if req.Stack == SingleStack {
		return fams[:1]
	}
	return slices.Compact(fams)
}

// addressOf returns the requested address of family f.
func (req Request) addressOf(f Family) (netip.Addr, bool) {
	for _, addr := range req.Addresses {
		if f.holds(addr) {
			return addr, true
		}
	}
	return netip.Addr{}, false
}
