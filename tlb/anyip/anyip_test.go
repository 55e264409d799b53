package anyip

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func pfx(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, x := range s {
		out = append(out, netip.MustParsePrefix(x))
	}
	return out
}

func TestPlanFor(t *testing.T) {
	for name, tc := range map[string]struct {
		want, actual []netip.Prefix
		plan         Plan
	}{
		"empty":            {plan: Plan{}},
		"add new":          {want: pfx("203.0.113.0/24"), plan: Plan{Add: pfx("203.0.113.0/24")}},
		"keep existing":    {want: pfx("203.0.113.0/24"), actual: pfx("203.0.113.0/24"), plan: Plan{Keep: pfx("203.0.113.0/24")}},
		"delete dropped":   {actual: pfx("198.51.100.0/24"), plan: Plan{Delete: pfx("198.51.100.0/24")}},
		"unmasked is same": {want: pfx("203.0.113.7/24"), actual: pfx("203.0.113.0/24"), plan: Plan{Keep: pfx("203.0.113.0/24")}},
		"mixed": {want: pfx("203.0.113.0/24", "198.51.100.0/25"), actual: pfx("203.0.113.0/24", "192.0.2.0/24"),
			plan: Plan{Add: pfx("198.51.100.0/25"), Delete: pfx("192.0.2.0/24"), Keep: pfx("203.0.113.0/24")}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := PlanFor(tc.want, tc.actual); !reflect.DeepEqual(got, tc.plan) {
				t.Errorf("PlanFor = %+v, want %+v", got, tc.plan)
			}
		})
	}
}

// TestReconcileInNamespace runs against the real kernel routing table of a
// fresh network namespace (the host kernel has local routes, so no lab VM
// is needed): VIPs in a range become reachable locally, a foreign local
// route survives, and a second pass changes nothing.
func TestReconcileInNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root for a network namespace; CI runs as root")
	}
	name := "tlb-anyip-test"
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lo, _ := h.LinkByName("lo")
	if err := h.LinkSetUp(lo); err != nil {
		t.Fatal(err)
	}
	// A foreign local route, not ours.
	if out, err := exec.Command("ip", "-n", name, "route", "add", "local", "192.0.2.0/24", "dev", "lo", "table", "local").CombinedOutput(); err != nil {
		t.Fatalf("foreign route: %v: %s", err, out)
	}
	r := New(h, slog.New(slog.DiscardHandler))
	ctx := context.Background()

	plan, err := r.Reconcile(ctx, pfx("203.0.113.0/24"))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Add) != 1 {
		t.Fatalf("first pass added %v, want the VIP range", plan.Add)
	}
	if out, _ := exec.Command("ip", "-n", name, "route", "get", "203.0.113.77").CombinedOutput(); !strings.HasPrefix(string(out), "local 203.0.113.77") {
		t.Errorf("a VIP in the range is not local: %s", out)
	}
	plan, err = r.Reconcile(ctx, pfx("203.0.113.0/24"))
	if err != nil || !plan.Empty() {
		t.Fatalf("second pass = %+v, %v; want an empty plan", plan, err)
	}
	if _, err := r.Reconcile(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("ip", "-n", name, "route", "get", "203.0.113.77").CombinedOutput(); strings.HasPrefix(string(out), "local") {
		t.Errorf("VIP range still local after removal: %s", out)
	}
	if out, _ := exec.Command("ip", "-n", name, "route", "show", "table", "local", "192.0.2.0/24").CombinedOutput(); !strings.Contains(string(out), "local 192.0.2.0/24") {
		t.Errorf("foreign local route was removed: %q", out)
	}
}
