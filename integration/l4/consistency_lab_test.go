//go:build lab

package l4

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/moby/ipvs"

	"github.com/tlbproject/tlb/integration/flowprobe"
)

// TestDirectorsAgreeOnFlowsAfterChurn is proof 3: two directors given the
// same real servers in different orders send the same flows to the same
// real servers, and still do after one of them sees churn (a real server
// removed and re-added, a new one added that sorts in the middle) while
// the other starts fresh with the final set. A third director programmed
// naively with ipvsadm through the same churn shows that the comparison
// can fail.
func TestDirectorsAgreeOnFlowsAfterChurn(t *testing.T) {
	const flows = 1000
	p := newProbeLab(t, 3)
	set := realServers(10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
	shuffled := []netip.Addr{set[3], set[9], set[0], set[6], set[2], set[8], set[1], set[5], set[7], set[4]}
	reversed := slices.Clone(set)
	slices.Reverse(reversed)

	d1, h1 := newDirector(t, p.dirs[0])
	d2, _ := newDirector(t, p.dirs[1])
	reconcile(t, d1, webService(shuffled, nil))
	reconcile(t, d2, webService(reversed, nil))

	ports := flowprobe.PortRange(20000, flows)
	f1, f2 := p.flows(t, 0, ports), p.flows(t, 1, ports)
	t.Logf("round 1: %d flows, spread over real servers %v", flows, flowprobe.Spread(f1))
	if n := flowprobe.Disagreements(f1, f2); n != 0 {
		t.Fatalf("round 1: directors disagree on %d of %d flows", n, flows)
	}
	if len(flowprobe.Spread(f1)) != len(set) {
		t.Fatalf("round 1: flows reached %d of %d real servers", len(flowprobe.Spread(f1)), len(set))
	}

	// Churn on director 1: remove 198.18.100.30, re-add it, add .55.
	without := slices.DeleteFunc(slices.Clone(set), func(a netip.Addr) bool { return a == set[2] })
	final := append(slices.Clone(set), realServers(55)...)
	reconcile(t, d1, webService(without, nil))
	reconcile(t, d1, webService(set, nil))
	reconcile(t, d1, webService(final, nil))

	// Director 2 starts fresh with the final set.
	p.dirs[1].Run(t, "ipvsadm", "-C")
	d2, h2 := newDirector(t, p.dirs[1])
	reconcile(t, d2, webService(final, nil))

	// Control: the same history applied naively with ipvsadm.
	c := p.dirs[2]
	c.Run(t, "ipvsadm", "-A", "-t", vip.String()+":80", "-s", "mh", "-b", "flag-1,flag-2")
	for _, a := range set {
		c.Run(t, "ipvsadm", "-a", "-t", vip.String()+":80", "-r", a.String()+":80", "-i", "-w", "1")
	}
	c.Run(t, "ipvsadm", "-d", "-t", vip.String()+":80", "-r", set[2].String()+":80")
	for _, a := range []netip.Addr{set[2], realServers(55)[0]} {
		c.Run(t, "ipvsadm", "-a", "-t", vip.String()+":80", "-r", a.String()+":80", "-i", "-w", "1")
	}

	o1, o2 := destOrder(t, h1), destOrder(t, h2)
	t.Logf("kernel list order after churn: %v; fresh: %v", o1, o2)

	ports = flowprobe.PortRange(30000, flows)
	f1, f2, f3 := p.flows(t, 0, ports), p.flows(t, 1, ports), p.flows(t, 2, ports)
	naive := flowprobe.Disagreements(f3, f2)
	t.Logf("round 2: %d flows over %d real servers; churned director vs fresh: %d disagree; naive ipvsadm churn vs fresh: %d disagree (%.1f%%)",
		flows, len(final), flowprobe.Disagreements(f1, f2), naive, 100*float64(naive)/flows)
	if n := flowprobe.Disagreements(f1, f2); n != 0 {
		t.Fatalf("round 2: churned and fresh directors disagree on %d of %d flows", n, flows)
	}
	if !slices.Equal(o1, o2) {
		t.Errorf("kernel real-server order differs: churned %v, fresh %v", o1, o2)
	}
	if naive == 0 {
		t.Errorf("naive ipvsadm churn agreed on every flow: this comparison cannot detect order drift")
	}
	if flowprobe.Spread(f1)[realServers(55)[0].String()] == 0 {
		t.Errorf("the added real server got no flows: %v", flowprobe.Spread(f1))
	}
}

// TestRemovingOneGatewayMovesAboutOneNth is the first half of proof 4: the
// same flows, at a director holding N real servers and at one from which
// one real server was removed, differ in close to 1/N of cases.
func TestRemovingOneGatewayMovesAboutOneNth(t *testing.T) {
	const flows, n = 1000, 8
	p := newProbeLab(t, 2)
	set := realServers(11, 12, 13, 14, 15, 16, 17, 18)
	removed := set[3]
	dAll, _ := newDirector(t, p.dirs[0])
	dLess, _ := newDirector(t, p.dirs[1])
	reconcile(t, dAll, webService(set, nil))
	reconcile(t, dLess, webService(set, nil))
	reconcile(t, dLess, webService(slices.DeleteFunc(slices.Clone(set), func(a netip.Addr) bool { return a == removed }), nil))

	ports := flowprobe.PortRange(40000, flows)
	before, after := p.flows(t, 0, ports), p.flows(t, 1, ports)
	moved, onRemoved, movedOthers := 0, 0, 0
	for port, rs := range before {
		if rs == removed.String() {
			onRemoved++
		}
		if after[port] != rs {
			moved++
			if rs != removed.String() {
				movedOthers++
			}
		}
		if after[port] == removed.String() {
			t.Fatalf("flow from port %d still goes to the removed real server", port)
		}
	}
	frac := float64(moved) / flows
	t.Logf("removing 1 of %d real servers moved %d of %d flows (%.1f%%, ideal %.1f%%): %d were on the removed one, %d others moved",
		n, moved, flows, 100*frac, 100.0/n, onRemoved, movedOthers)
	if frac > 1.5/n {
		t.Errorf("moved fraction %.3f exceeds 1.5/N = %.3f", frac, 1.5/n)
	}
	if onRemoved == 0 || moved < onRemoved {
		t.Errorf("moved %d flows but %d were on the removed real server", moved, onRemoved)
	}
}

func destOrder(t *testing.T, h *ipvs.Handle) []string {
	t.Helper()
	svcs, err := h.GetServices()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs {
		if s.Address.Equal(vip.AsSlice()) {
			ds, err := h.GetDestinations(s)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, d := range ds {
				out = append(out, d.Address.String())
			}
			return out
		}
	}
	t.Fatal("no service for the VIP")
	return nil
}
