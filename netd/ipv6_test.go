package netd

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/netd/model"
)

var vip6 = netip.MustParseAddr("2001:db8:cafe::10")

// TestDualStackBindsEachFamilyOnItsTunnel checks the plan for a gateway
// with an IPv4 and an IPv6 VIP: the IPv6 one goes on ip6tnl0 as a /128
// with netd's mark and the IPv6 tunnel's sysctls, the IPv4 one stays on
// tunl0; the second pass writes nothing; dropping the IPv6 VIP unbinds it
// and leaves a foreign IPv6 address on the tunnel alone.
func TestDualStackBindsEachFamilyOnItsTunnel(t *testing.T) {
	k := newFakeKernel()
	g := newTestGateway(k)
	want := model.NewGateway("tunl0", []netip.Addr{vip6, vip10}, 1440)
	res, err := g.Reconcile(want)
	if err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	if l := k.links["ip6tnl0"]; l == nil || !l.up || l.kind != "ip6tnl" {
		t.Fatalf("ipv6 tunnel = %+v, want an ip6tnl link that is up; plan %s", l, res.Plan)
	}
	if got, w := addrsOf(k, "ip6tnl0"), []string{"2001:db8:cafe::10/128/" + model.Mark6}; !slices.Equal(got, w) {
		t.Fatalf("ip6tnl0 addresses = %v, want %v", got, w)
	}
	if got, w := addrsOf(k, "tunl0"), []string{"203.0.113.10/32/tunl0:tlb"}; !slices.Equal(got, w) {
		t.Fatalf("tunl0 addresses = %v, want %v", got, w)
	}
	for key, v := range map[string]string{"net/ipv6/conf/ip6tnl0/disable_ipv6": "0", "net/ipv6/conf/ip6tnl0/accept_dad": "0"} {
		if k.sysctls[key] != v {
			t.Errorf("sysctl %s = %q, want %q", key, k.sysctls[key], v)
		}
	}
	if want.MSS6() != 1400 {
		t.Errorf("MSS6 = %d, want 1400 (1440 less 40 for the larger inner and outer headers)", want.MSS6())
	}
	if res, err = g.Reconcile(want); err != nil || res.Writes != 0 {
		t.Fatalf("second reconcile wrote %d (%v), plan %s; want nothing", res.Writes, err, res.Plan)
	}

	foreign := TunnelAddr{Prefix: netip.MustParsePrefix("2001:db8:beef::1/128")}
	k.links["ip6tnl0"].addrs = append(k.links["ip6tnl0"].addrs, foreign)
	if _, err := g.Reconcile(model.NewGateway("tunl0", []netip.Addr{vip10}, 1440)); err != nil {
		t.Fatalf("reconcile without the IPv6 VIP: %v", err)
	}
	if got, w := addrsOf(k, "ip6tnl0"), []string{"2001:db8:beef::1/128/"}; !slices.Equal(got, w) {
		t.Fatalf("ip6tnl0 addresses = %v, want only the foreign one %v", got, w)
	}
}

// TestIPv6TunnelOfAnotherKindIsRefused: a link called ip6tnl0 that is not
// an ip6tnl is neither used nor changed.
func TestIPv6TunnelOfAnotherKindIsRefused(t *testing.T) {
	k := newFakeKernel()
	k.links["ip6tnl0"] = &fakeLink{kind: "dummy"}
	if _, err := newTestGateway(k).Reconcile(model.NewGateway("tunl0", []netip.Addr{vip6}, 1440)); err == nil {
		t.Fatal("reconcile used a dummy link as the IPv6 tunnel")
	}
	if k.writes != 0 {
		t.Fatalf("%d writes after a refused plan", k.writes)
	}
}

func TestMSS6(t *testing.T) {
	for mss, want := range map[uint16]uint16{0: 0, 1440: 1400, 8940: 8900, 1200: model.MinMSS6} {
		if got := (model.Gateway{MSS: mss}).MSS6(); got != want {
			t.Errorf("MSS %d: MSS6 = %d, want %d", mss, got, want)
		}
	}
}

// TestGUEOverIPv6ReceiverOnlyWithAnIPv6VIP: a GUE node adds its IPv6 GUE
// receiver (the directors send an IPv6 VIP's packets in GUE over IPv6)
// once it serves an IPv6 VIP, not before; its IPv6 VIPs are clamped 40
// bytes below the IPv4 ones (1388 and 1428 at MTU 1500).
func TestGUEOverIPv6ReceiverOnlyWithAnIPv6VIP(t *testing.T) {
	k := newFakeKernel()
	k.routeMTU = 1500
	g := newTestGateway(k)
	want := model.NewGateway("tunl0", []netip.Addr{vip10}, 0)
	want.GUEPort, want.MSSPolicy = 6080, model.MSSPolicy{Mode: model.MSSFromMTU}
	if _, err := g.Reconcile(want); err != nil {
		t.Fatal(err)
	}
	if k.fou[6080] != "gue" || len(k.fou6) != 0 {
		t.Fatalf("IPv4 only: receivers %v, IPv6 %v; want only the IPv4 one", k.fou, k.fou6)
	}
	want.VIPs = append(want.VIPs, vip6)
	res, err := g.Reconcile(want)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.AddGUE6 != 6080 || k.fou6[6080] != "gue" || res.Plan.AddGUE != 0 {
		t.Fatalf("plan %s; IPv6 receivers %v; want one IPv6 gue receiver on 6080 added", res.Plan, k.fou6)
	}
	if k.clamp.MSS != 1428 || model.IPv6MSS(k.clamp.MSS) != 1388 {
		t.Errorf("clamp MSS %d (IPv6 %d), want 1428 and 1388", k.clamp.MSS, model.IPv6MSS(k.clamp.MSS))
	}
	if res, err := g.Reconcile(want); err != nil || res.Writes != 0 {
		t.Fatalf("resync wrote %d (%v), plan %s", res.Writes, err, res.Plan)
	}
	k.fou6[6080] = "direct"
	if _, err := g.Reconcile(want); err == nil || !strings.Contains(err.Error(), "ipv6 udp port 6080 has a FOU receiver of type direct") {
		t.Fatalf("foreign IPv6 receiver: err %v", err)
	}
}
