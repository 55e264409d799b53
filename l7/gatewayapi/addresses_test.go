package gatewayapi

import (
	"net/netip"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestSeveralAddressesServed: a Gateway asking for two addresses got the
// first and had the second reported "not requested" (AddressNotUsable).
// Now each VIP it has is served (every listener on every address, in the
// model and in status.addresses) and it is Programmed once it has all.
func TestSeveralAddressesServed(t *testing.T) {
	const second = "203.0.113.11"
	in := world(t)
	in.Gateways[0].Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Value: testVIP}, {Value: second}, {}}
	chosen := netip.MustParseAddr("203.0.113.12") // the IPAM's pick for the entry without value
	in.Addresses[gwKey] = []netip.Addr{netip.MustParseAddr(testVIP), netip.MustParseAddr(second), chosen}
	res := Build(in)
	st := res.Status.Gateways[gwKey]
	wantCond(t, st.Conditions, "Programmed", true, string(gatewayv1.GatewayReasonProgrammed))
	var got []string
	for _, a := range st.Addresses {
		got = append(got, a.Value)
	}
	if want := []string{testVIP, second, chosen.String()}; !slices.Equal(got, want) {
		t.Errorf("status addresses %v; want %v", got, want)
	}
	if len(res.Config.Gateways) != 1 {
		t.Fatalf("gateways %s; want the Gateway served", jsonOf(res.Config.Gateways))
	}
	ports := map[netip.Addr][]uint32{}
	for _, l := range res.Config.Gateways[0].Listeners {
		ports[l.VIP] = append(ports[l.VIP], l.Port)
	}
	for _, a := range in.Addresses[gwKey] {
		if p := ports[a]; !slices.Equal(p, []uint32{80, 443}) {
			t.Errorf("listeners on %s: ports %v; want 80 and 443 on every address (the TLS listener has no route)", a, p)
		}
	}
}

// TestMissingAddressNamed: while one of two requested addresses has no VIP
// the Gateway is served on the other and not Programmed; the missing one
// is AddressNotUsable only when the IPAM refused it (in use, outside every
// pool), with the IPAM's reason, and AddressNotAssigned while it is
// pending. A request without value whose pool is full waits with the
// IPAM's reason.
func TestMissingAddressNamed(t *testing.T) {
	const second = "203.0.113.11"
	for name, tc := range map[string]struct {
		requests []gatewayv1.GatewaySpecAddress
		have     []string
		problems []AddressProblem
		reason   gatewayv1.GatewayConditionReason
		message  string
	}{
		"pending": {
			requests: []gatewayv1.GatewaySpecAddress{{Value: testVIP}, {Value: second}}, have: []string{testVIP},
			reason:  gatewayv1.GatewayReasonAddressNotAssigned,
			message: "served on 203.0.113.10 only: spec.addresses[1] 203.0.113.11: not assigned yet",
		},
		"in use": {
			requests: []gatewayv1.GatewaySpecAddress{{Value: testVIP}, {Value: second}}, have: []string{testVIP},
			problems: []AddressProblem{{Address: netip.MustParseAddr(second), Reason: "VIPInUse", Message: "VIP 203.0.113.11 is held by Service app/db"}},
			reason:   gatewayv1.GatewayReasonAddressNotUsable,
			message:  "served on 203.0.113.10 only: spec.addresses[1] 203.0.113.11: the IPAM says VIPInUse: VIP 203.0.113.11 is held by Service app/db",
		},
		"none served": {
			requests: []gatewayv1.GatewaySpecAddress{{Value: testVIP}, {}},
			problems: []AddressProblem{{Address: netip.MustParseAddr(testVIP), Reason: "NoMatchingPool", Message: "outside every pool"},
				{Reason: "PoolExhausted", Message: "no address left"}},
			reason: gatewayv1.GatewayReasonAddressNotUsable,
			message: "no VIP: spec.addresses[0] 203.0.113.10: the IPAM says NoMatchingPool: outside every pool; " +
				"spec.addresses[1] (any): not assigned yet; the IPAM says PoolExhausted: no address left",
		},
		"no request, pool full": {
			problems: []AddressProblem{{Reason: "PoolExhausted", Message: "no address left"}},
			reason:   gatewayv1.GatewayReasonAddressNotAssigned,
			message:  "no VIP: an address (any): not assigned yet; the IPAM says PoolExhausted: no address left",
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			in.Gateways[0].Spec.Addresses = tc.requests
			in.Addresses = map[types.NamespacedName][]netip.Addr{}
			for _, a := range tc.have {
				in.Addresses[gwKey] = append(in.Addresses[gwKey], netip.MustParseAddr(a))
			}
			in.AddressProblems = map[types.NamespacedName][]AddressProblem{gwKey: tc.problems}
			res := Build(in)
			st := res.Status.Gateways[gwKey]
			wantCond(t, st.Conditions, "Programmed", false, string(tc.reason))
			if msg := cond(t, st.Conditions, "Programmed").Message; msg != tc.message {
				t.Errorf("Programmed message\n %q; want\n %q", msg, tc.message)
			}
			if served := len(res.Config.Gateways) == 1; served != (len(tc.have) > 0) {
				t.Errorf("served %v; want it served on the addresses it has (%v)", served, tc.have)
			}
		})
	}
}
