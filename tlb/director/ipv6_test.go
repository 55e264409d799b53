package director

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/moby/ipvs"
)

// TestIPv6ServiceIsOwnedLikeIPv4 runs an IPv6 virtual service through the
// director's whole cycle beside an IPv6 service of another IPVS user on
// the same VIP: it is created as AF_INET6 with a /128 netmask and
// tunnel-mode IPv6 real servers, a resync writes nothing, the ownership
// record names it in the bracketed form ParseKey reads back, a restarted
// director deletes it, and the foreign service is never written to.
func TestIPv6ServiceIsOwnedLikeIPv4(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := &fakeIPVS{}
	foreign := &ipvs.Service{Address: net.ParseIP("2001:db8:cafe::10"), Protocol: 6, Port: 443, SchedName: "wrr", AddressFamily: syscall.AF_INET6, Netmask: 128}
	if err := f.NewService(foreign); err != nil {
		t.Fatal(err)
	}
	f.calls = nil
	web := desired(service("2001:db8:cafe::10", 80, mrs("fd00:10:2::2", 1), mrs("fd00:10:1::2", 1)))

	d := newDirector(t, f, Options{RuntimeDir: dir})
	if _, err := d.Reconcile(ctx, web); err != nil {
		t.Fatal(err)
	}
	id := "[2001:db8:cafe::10]:80/6"
	if got := f.order(id); !slices.Equal(got, []string{"fd00:10:1::2 w1", "fd00:10:2::2 w1"}) {
		t.Fatalf("real servers of %s = %v; want both gateways in canonical order", id, got)
	}
	s := f.svcs[slices.IndexFunc(f.svcs, func(x *fakeSvc) bool { return svcID(&x.svc) == id })]
	if s.svc.AddressFamily != syscall.AF_INET6 || s.svc.Netmask != 128 || s.svc.SchedName != "mh" {
		t.Errorf("service = family %d netmask %d sched %q; want AF_INET6, 128, mh", s.svc.AddressFamily, s.svc.Netmask, s.svc.SchedName)
	}
	for _, dst := range s.dests {
		if dst.AddressFamily != syscall.AF_INET6 || dst.ConnectionFlags != ipvs.ConnFwdTunnel {
			t.Errorf("real server %s: family %d forwarding %#x; want AF_INET6 tunnel", dst.Address, dst.AddressFamily, dst.ConnectionFlags)
		}
	}
	if res, err := d.Reconcile(ctx, web); err != nil || res.Writes != 0 {
		t.Fatalf("resync wrote %d (%v); want 0", res.Writes, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil || !strings.Contains(string(data), `"[2001:db8:cafe::10]:80/tcp"`) {
		t.Fatalf("record file = %q, %v", data, err)
	}

	restarted := newDirector(t, f, Options{RuntimeDir: dir})
	if _, err := restarted.Reconcile(ctx, desired()); err != nil {
		t.Fatal(err)
	}
	if w := writesTo(f.calls, svcID(foreign)); len(w) != 0 {
		t.Errorf("wrote to the foreign IPv6 service: %v", w)
	}
	if len(f.svcs) != 1 || svcID(&f.svcs[0].svc) != svcID(foreign) {
		t.Errorf("kernel services after removal = %d; want only the foreign one", len(f.svcs))
	}
}
