package netd

import (
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"

	"github.com/tlbproject/tlb/netd/model"
)

var (
	vip10 = netip.MustParseAddr("203.0.113.10")
	vip11 = netip.MustParseAddr("203.0.113.11")
	vip12 = netip.MustParseAddr("203.0.113.12")
)

func newTestGateway(k *fakeKernel) *Gateway {
	return NewGateway(k, k, k, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func addrsOf(k *fakeKernel, name string) []string {
	var out []string
	for _, a := range k.links[name].addrs {
		out = append(out, a.Prefix.String()+"/"+a.Label)
	}
	slices.Sort(out)
	return out
}

func TestReconcileFromScratchThenIdempotent(t *testing.T) {
	k := newFakeKernel()
	g := newTestGateway(k)
	want := model.NewGateway("tunl0", []netip.Addr{vip11, vip10}, 1440)

	res, err := g.Reconcile(want)
	if err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	// create + 5 sysctls + up + clamp + 2 addresses
	if res.Writes != 10 || k.writes != 10 {
		t.Fatalf("first reconcile wrote %d (kernel counted %d), want 10; plan %s", res.Writes, k.writes, res.Plan)
	}
	if l := k.links["tunl0"]; l == nil || !l.up || l.kind != "ipip" {
		t.Fatalf("tunnel = %+v, want an ipip link that is up", l)
	}
	if got, want := addrsOf(k, "tunl0"), []string{"203.0.113.10/32/tunl0:tlb", "203.0.113.11/32/tunl0:tlb"}; !slices.Equal(got, want) {
		t.Fatalf("addresses = %v, want %v", got, want)
	}
	for key, v := range map[string]string{
		"net/ipv4/conf/all/arp_ignore": "1", "net/ipv4/conf/all/arp_announce": "2",
		"net/ipv4/conf/tunl0/rp_filter": "2", "net/ipv4/conf/all/rp_filter": "1",
	} {
		if k.sysctls[key] != v {
			t.Errorf("sysctl %s = %q, want %q", key, k.sysctls[key], v)
		}
	}
	if !k.clamp.Intact || k.clamp.MSS != 1440 || !slices.Equal(k.clamp.VIPs, want.VIPs) {
		t.Fatalf("clamp = %+v", k.clamp)
	}

	res, err = g.Reconcile(want)
	if err != nil {
		t.Fatalf("second reconcile: %v", err)
	}
	if res.Writes != 0 || !res.Plan.Empty() || k.writes != 10 {
		t.Fatalf("second reconcile wrote %d, plan %s; want no changes", res.Writes, res.Plan)
	}
}

func TestReconcileAdoptsExistingTunnel(t *testing.T) {
	k := newFakeKernel()
	if err := k.CreateTunnel("tunl0"); err != nil { // as the ipip module does
		t.Fatal(err)
	}
	k.writes = 0
	res, err := newTestGateway(k).Reconcile(model.NewGateway("tunl0", nil, 1440))
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.CreateTunnel || !res.Plan.BringUp {
		t.Fatalf("plan %s: want the existing tunnel adopted and brought up", res.Plan)
	}
}

func TestReconcileNeverTouchesForeignAddresses(t *testing.T) {
	k := newFakeKernel()
	g := newTestGateway(k)
	if _, err := g.Reconcile(model.NewGateway("tunl0", []netip.Addr{vip10}, 1440)); err != nil {
		t.Fatal(err)
	}
	// Someone else binds an unrelated address and one of the VIPs netd will be asked for.
	foreign := []TunnelAddr{
		{Prefix: netip.MustParsePrefix("198.51.100.7/32"), Label: "tunl0"},
		{Prefix: netip.MustParsePrefix("203.0.113.12/32"), Label: ""},
	}
	k.links["tunl0"].addrs = append(k.links["tunl0"].addrs, foreign...)

	res, err := g.Reconcile(model.NewGateway("tunl0", []netip.Addr{vip11, vip12}, 1440))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Plan.Foreign, []netip.Addr{vip12}) {
		t.Fatalf("foreign = %v, want [%v]", res.Plan.Foreign, vip12)
	}
	want := []string{"198.51.100.7/32/tunl0", "203.0.113.11/32/tunl0:tlb", "203.0.113.12/32/"}
	if got := addrsOf(k, "tunl0"); !slices.Equal(got, want) {
		t.Fatalf("addresses = %v, want %v", got, want)
	}
	// Dropping every VIP removes only netd's own.
	if _, err := g.Reconcile(model.NewGateway("tunl0", nil, 1440)); err != nil {
		t.Fatal(err)
	}
	want = []string{"198.51.100.7/32/tunl0", "203.0.113.12/32/"}
	if got := addrsOf(k, "tunl0"); !slices.Equal(got, want) {
		t.Fatalf("after dropping all VIPs addresses = %v, want %v", got, want)
	}
}

func TestReconcileRefusesNonIPIPLink(t *testing.T) {
	k := newFakeKernel()
	k.links["tunl0"] = &fakeLink{kind: "veth"}
	_, err := newTestGateway(k).Reconcile(model.NewGateway("tunl0", []netip.Addr{vip10}, 1440))
	if err == nil || k.writes != 0 {
		t.Fatalf("err = %v, writes = %d; want an error and no writes", err, k.writes)
	}
}

func TestReconcileClampChanges(t *testing.T) {
	tests := map[string]struct {
		next        model.Gateway
		wantRebuild bool
		wantAdd     []netip.Addr
		wantDel     []netip.Addr
	}{
		"vip added":   {next: model.NewGateway("tunl0", []netip.Addr{vip10, vip11, vip12}, 1440), wantAdd: []netip.Addr{vip12}},
		"vip removed": {next: model.NewGateway("tunl0", []netip.Addr{vip10}, 1440), wantDel: []netip.Addr{vip11}},
		"mss changed": {next: model.NewGateway("tunl0", []netip.Addr{vip10, vip11}, 1400), wantRebuild: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := newFakeKernel()
			g := newTestGateway(k)
			if _, err := g.Reconcile(model.NewGateway("tunl0", []netip.Addr{vip10, vip11}, 1440)); err != nil {
				t.Fatal(err)
			}
			res, err := g.Reconcile(tc.next)
			if err != nil {
				t.Fatal(err)
			}
			p := res.Plan
			if p.ClampRebuild != tc.wantRebuild || !slices.Equal(p.ClampAdd, tc.wantAdd) || !slices.Equal(p.ClampDel, tc.wantDel) {
				t.Fatalf("plan %s: want rebuild=%v add=%v del=%v", p, tc.wantRebuild, tc.wantAdd, tc.wantDel)
			}
			got := slices.Clone(k.clamp.VIPs)
			slices.SortFunc(got, func(a, b netip.Addr) int { return a.Compare(b) })
			if !slices.Equal(got, tc.next.VIPs) || k.clamp.MSS != tc.next.MSS {
				t.Fatalf("clamp = %+v, want mss %d VIPs %v", k.clamp, tc.next.MSS, tc.next.VIPs)
			}
		})
	}
}

func TestReconcileRecoversAfterFailure(t *testing.T) {
	k := newFakeKernel()
	g := newTestGateway(k)
	want := model.NewGateway("tunl0", []netip.Addr{vip10}, 1440)
	k.failOn = "addr"
	if _, err := g.Reconcile(want); !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected failure wrapped", err)
	}
	k.failOn = ""
	res, err := g.Reconcile(want)
	if err != nil {
		t.Fatal(err)
	}
	if res.Writes != 1 || !slices.Equal(res.Plan.AddVIPs, []netip.Addr{vip10}) {
		t.Fatalf("retry plan %s wrote %d; want only the missing VIP bound", res.Plan, res.Writes)
	}
}

func TestReconcilePortMap(t *testing.T) {
	k := newFakeKernel()
	g := newTestGateway(k)
	base := model.NewGateway("tunl0", []netip.Addr{vip10, vip11}, 1440)
	if _, err := g.Reconcile(base); err != nil {
		t.Fatal(err)
	}
	https := model.PortMap{VIP: vip10, Protocol: model.ProtocolTCP, Port: 443, TargetPort: 10443}
	mapped := base.WithPorts([]model.PortMap{https})

	res, err := g.Reconcile(mapped)
	if err != nil {
		t.Fatal(err)
	}
	if res.Writes != 1 || !res.Plan.ClampRebuild || !slices.Equal(k.clamp.Ports, mapped.Ports) {
		t.Fatalf("adding a mapping: plan %s, %d writes, kernel ports %v; want one rebuild to %v", res.Plan, res.Writes, k.clamp.Ports, mapped.Ports)
	}
	before := k.writes
	if res, err = g.Reconcile(mapped); err != nil || res.Writes != 0 || k.writes != before {
		t.Fatalf("in sync: plan %s, %d writes, err %v; want none", res.Plan, res.Writes, err)
	}
	if res, err = g.Reconcile(base); err != nil || !slices.Equal(res.Plan.PortsDel, mapped.Ports) || len(k.clamp.Ports) != 0 {
		t.Fatalf("removing the mapping: plan %s, kernel ports %v, err %v", res.Plan, k.clamp.Ports, err)
	}
}
