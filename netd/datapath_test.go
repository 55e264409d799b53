package netd

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/netd/model"
)

func TestMSSFollowsThePathMTUAndTheEncapsulation(t *testing.T) {
	tests := map[string]struct {
		policy   model.MSSPolicy
		guePort  uint16
		routeMTU int
		want     uint16
	}{
		"ipip at 1500":                 {model.MSSPolicy{Mode: model.MSSFromMTU}, 0, 1500, 1440},
		"gue at 1500":                  {model.MSSPolicy{Mode: model.MSSFromMTU}, 6080, 1500, 1428},
		"ipip at 9000 (jumbo)":         {model.MSSPolicy{Mode: model.MSSFromMTU}, 0, 9000, 8940},
		"gue at 9000 (jumbo)":          {model.MSSPolicy{Mode: model.MSSFromMTU}, 6080, 9000, 8928},
		"configured mtu wins":          {model.MSSPolicy{Mode: model.MSSFromMTU, MTU: 9000}, 0, 1500, 8940},
		"tiny mtu floors at 536":       {model.MSSPolicy{Mode: model.MSSFromMTU, MTU: 576}, 6080, 1500, 536},
		"off writes no clamp":          {model.MSSPolicy{Mode: model.MSSOff}, 0, 1500, 0},
		"fixed stays as given (1400)":  {model.MSSPolicy{}, 6080, 9000, 1400},
		"route mtu not read when off":  {model.MSSPolicy{Mode: model.MSSOff}, 0, 0, 0},
		"route mtu not read when told": {model.MSSPolicy{Mode: model.MSSFromMTU, MTU: 1500}, 0, 0, 1440},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := newFakeKernel()
			k.routeMTU = tc.routeMTU
			g := newTestGateway(k)
			want := model.NewGateway("tunl0", []netip.Addr{vip10}, 1400)
			want.MSSPolicy, want.GUEPort = tc.policy, tc.guePort
			if _, err := g.Reconcile(want); err != nil {
				t.Fatal(err)
			}
			if !k.clamp.Intact || k.clamp.MSS != tc.want {
				t.Fatalf("clamp %+v, want MSS %d", k.clamp, tc.want)
			}
			// In sync: nothing more to write.
			if res, err := g.Reconcile(want); err != nil || res.Writes != 0 {
				t.Fatalf("second reconcile wrote %d (%s), err %v", res.Writes, res.Plan, err)
			}
		})
	}
}

func TestMSSFollowsALinkMTUChange(t *testing.T) {
	k := newFakeKernel()
	k.routeMTU = 1500
	g := newTestGateway(k)
	want := model.NewGateway("tunl0", []netip.Addr{vip10}, 0)
	want.MSSPolicy = model.MSSPolicy{Mode: model.MSSFromMTU}
	if _, err := g.Reconcile(want); err != nil {
		t.Fatal(err)
	}
	k.routeMTU = 9000 // the fabric moved to jumbo frames
	res, err := g.Reconcile(want)
	if err != nil || !res.Plan.ClampRebuild || k.clamp.MSS != 8940 {
		t.Fatalf("after the MTU change: plan %s, clamp %+v, err %v; want a rebuild to 8940", res.Plan, k.clamp, err)
	}
}

func TestDerivedMSSWithoutADefaultRouteIsAnError(t *testing.T) {
	k := newFakeKernel()
	g := newTestGateway(k)
	want := model.NewGateway("tunl0", []netip.Addr{vip10}, 0)
	want.MSSPolicy = model.MSSPolicy{Mode: model.MSSFromMTU}
	_, err := g.Reconcile(want)
	if err == nil || !strings.Contains(err.Error(), "netd.mtu") || k.writes != 0 {
		t.Fatalf("err %v after %d writes; want an error pointing at netd.mtu and nothing written", err, k.writes)
	}
}

func TestGUEReceiverIsAddedOnceBeforeTheVIPs(t *testing.T) {
	k := newFakeKernel()
	g := newTestGateway(k)
	want := model.NewGateway("tunl0", []netip.Addr{vip10}, 1428)
	want.GUEPort = 6080
	res, err := g.Reconcile(want)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.AddGUE != 6080 || k.fou[6080] != "gue" {
		t.Fatalf("plan %s, receivers %v; want a gue receiver on 6080", res.Plan, k.fou)
	}
	s := res.Plan.String()
	if strings.Index(s, "add gue receiver on udp port 6080") > strings.Index(s, "bind 203.0.113.10") {
		t.Errorf("plan %q binds the VIP before the receiver is there", s)
	}
	if res, err := g.Reconcile(want); err != nil || res.Writes != 0 {
		t.Fatalf("second reconcile wrote %d (%s), err %v", res.Writes, res.Plan, err)
	}
}

func TestForeignFOUReceiverOnThePortIsRefused(t *testing.T) {
	k := newFakeKernel()
	k.fou = map[uint16]string{6080: "direct"}
	g := newTestGateway(k)
	want := model.NewGateway("tunl0", []netip.Addr{vip10}, 1428)
	want.GUEPort = 6080
	_, err := g.Reconcile(want)
	if err == nil || !strings.Contains(err.Error(), "udp port 6080 has a FOU receiver of type direct") || k.writes != 0 {
		t.Fatalf("err %v after %d writes; want a refusal and nothing written", err, k.writes)
	}
}
