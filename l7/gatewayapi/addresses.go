package gatewayapi

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// AddressProblem is why the IPAM gave one requested address of a Gateway
// no VIP: the last warning Event about the VIP Service that asks for it.
type AddressProblem struct {
	// Address is the address asked for; the zero Addr for a request
	// without value (the IPAM chooses).
	Address netip.Addr
	// Reason and Message are the Event's (e.g. VIPInUse, NoMatchingPool).
	Reason, Message string
}

// String is the problem as a condition message names it.
func (p AddressProblem) String() string { return p.Reason + ": " + p.Message }

// addressGaps compares the addresses g asked for (spec.addresses; none
// asks for one the IPAM chooses) with those it has. unusable names each
// requested IP the IPAM refused (problems say why); waiting names each
// request not served yet for which the IPAM has said nothing that rules
// it out, with its reason when it has one (a full pool).
func (g *gateway) addressGaps(problems []AddressProblem) (unusable, waiting []string) {
	static := map[netip.Addr]bool{}
	for _, a := range g.obj.Spec.Addresses {
		if ip, err := netip.ParseAddr(a.Value); err == nil {
			static[ip] = true
		}
	}
	var chosen int // addresses the IPAM chose: not asked for by value
	for _, a := range g.addrs {
		if !static[a] {
			chosen++
		}
	}
	problemFor := func(ip netip.Addr, nth int) (AddressProblem, bool) {
		for _, p := range problems {
			if p.Address == ip {
				if nth == 0 {
					return p, true
				}
				nth--
			}
		}
		return AddressProblem{}, false
	}
	requests := g.obj.Spec.Addresses
	if len(requests) == 0 {
		requests = []gatewayv1.GatewaySpecAddress{{}} // one address the IPAM chooses
	}
	anyMissing := 0
	for i, a := range requests {
		field := fmt.Sprintf("spec.addresses[%d]", i)
		if len(g.obj.Spec.Addresses) == 0 {
			field = "an address"
		}
		if a.Value == "" {
			if chosen > 0 {
				chosen--
				continue
			}
			msg := field + " (any): not assigned yet"
			if p, ok := problemFor(netip.Addr{}, anyMissing); ok {
				msg += "; the IPAM says " + p.String()
			}
			anyMissing++
			waiting = append(waiting, msg)
			continue
		}
		ip, err := netip.ParseAddr(a.Value)
		if err != nil || slices.Contains(g.addrs, ip) {
			continue // a bad value is Accepted's to report
		}
		if p, ok := problemFor(ip, 0); ok {
			unusable = append(unusable, fmt.Sprintf("%s %s: the IPAM says %s", field, a.Value, p))
			continue
		}
		waiting = append(waiting, fmt.Sprintf("%s %s: not assigned yet", field, a.Value))
	}
	return unusable, waiting
}

// programmedCondition is g's Programmed condition: True only when every
// requested address is served. An address the IPAM refused (in use,
// outside every pool) is AddressNotUsable ("a provided static address
// can't be used"), naming it and the IPAM's reason; one not assigned yet
// is AddressNotAssigned. The addresses g has are served meanwhile.
func (b *builder) programmedCondition(g *gateway) metav1.Condition {
	gen, now := g.obj.Generation, b.in.Now
	if !g.isAccepted() {
		return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonInvalid, "the Gateway is not accepted", gen, now)
	}
	unusable, waiting := g.addressGaps(b.in.AddressProblems[nn(g.obj.Namespace, g.obj.Name)])
	served := "no VIP"
	if len(g.addrs) > 0 {
		served = "served on " + joinAddrs(g.addrs) + " only"
	}
	switch {
	case len(unusable) > 0:
		return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonAddressNotUsable,
			served+": "+strings.Join(append(unusable, waiting...), "; "), gen, now)
	case len(waiting) > 0:
		return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonAddressNotAssigned,
			served+": "+strings.Join(waiting, "; "), gen, now)
	case len(g.addrs) == 0:
		return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonAddressNotAssigned, "no VIP assigned yet", gen, now)
	}
	return condition(gatewayv1.GatewayConditionProgrammed, true, gatewayv1.GatewayReasonProgrammed, "programmed", gen, now)
}
