package ipam

import (
	"errors"
	"net/netip"
	"testing"
)

// TestHeldAddressesSurviveAnUnloadedPool is the allocator's side of "never
// a duplicate VIP": the controller starts while a VIPPool is invalid, so
// the allocator knows no pool at all, and records what the Services'
// status holds: two VIPs of the pool that will load, one of a pool that
// will not, and the address of a Service of another load balancer. Once
// the pool loads, new Services get none of those addresses, and the
// holders keep theirs.
func TestHeldAddressesSurviveAnUnloadedPool(t *testing.T) {
	ip := netip.MustParseAddr
	a := New(mustConfig(t, nil, nil))
	held := map[string]netip.Addr{
		"ns/old-a":   ip("203.0.113.0"),
		"ns/old-b":   ip("203.0.113.1"),
		"ns/invalid": ip("198.51.100.7"), // in the pool that is not loaded
	}
	for svc, addr := range held {
		al, err := a.Assign(svc, addr)
		if err != nil || al.Pool != "" {
			t.Fatalf("Assign(%s, %s) with no pools = %+v, %v; want it held with no pool", svc, addr, al, err)
		}
	}
	if c := a.Reserve("other/metallb", []netip.Addr{ip("203.0.113.2")}); len(c) != 0 {
		t.Fatalf("Reserve conflicts %v", c)
	}
	if _, err := a.Allocate("ns/new", Request{Environment: "prod"}); !errors.Is(err, ErrNotInPool) {
		t.Fatalf("Allocate with no pools: err = %v, want ErrNotInPool", err)
	}

	a.SetConfig(mustConfig(t, []L4Cluster{{Name: "c", Environment: "prod"}},
		[]VIPPool{{Name: "good", L4Cluster: "c", Prefixes: pfx("203.0.113.0/29")}}))
	if u := a.PoolUsage("good"); u.Used != 3 || u.Free != 5 {
		t.Fatalf("usage of good = %+v, want 3 used (two VIPs, one reservation), 5 free", u)
	}
	if u := a.ClusterUsage("c"); u.Used != 2 {
		t.Fatalf("usage of c = %+v, want 2 VIPs (a reservation is not one of its VIPs)", u)
	}
	for i, want := range []string{"203.0.113.3", "203.0.113.4"} {
		al, err := only(a.Allocate("ns/new"+string(rune('0'+i)), Request{Environment: "prod"}))
		if err != nil || al.Address != ip(want) {
			t.Fatalf("new Service %d got %s, %v; want %s, the lowest address nobody holds", i, al.Address, err, want)
		}
	}
	for _, addr := range []string{"203.0.113.0", "203.0.113.2", "198.51.100.7"} {
		if _, err := a.Allocate("ns/thief", Request{Addresses: []netip.Addr{ip(addr)}}); err == nil {
			t.Fatalf("%s handed to a new Service while another holds it", addr)
		}
	}
	for svc, addr := range held {
		al, ok := onlyHeld(a.Lookup(svc))
		if !ok || al.Address != addr {
			t.Fatalf("%s holds %+v, %v; want %s", svc, al, ok, addr)
		}
	}
	// The holder of a loaded pool's VIP asks again: it keeps its VIP.
	if al, err := only(a.Allocate("ns/old-a", Request{Environment: "prod"})); err != nil || al.Address != held["ns/old-a"] || al.Pool != "good" {
		t.Fatalf("old-a re-allocated = %+v, %v; want its own VIP in pool good", al, err)
	}
	// A reservation is dropped when its Service lets go of the address.
	a.Reserve("other/metallb", nil)
	if al, err := only(a.Allocate("ns/new9", Request{Environment: "prod"})); err != nil || al.Address != ip("203.0.113.2") {
		t.Fatalf("after the reservation ended: %s, %v; want 203.0.113.2", al.Address, err)
	}
}

// TestReserveDoesNotStealAnAllocation: a Service of another load balancer
// that claims one of TLB's VIPs gets no reservation for it.
func TestReserveDoesNotStealAnAllocation(t *testing.T) {
	ip := netip.MustParseAddr
	a := New(scenarioConfig(t))
	if _, err := a.Assign("ns/ours", ip("203.0.113.0")); err != nil {
		t.Fatal(err)
	}
	if c := a.Reserve("ns/foreign", []netip.Addr{ip("203.0.113.0"), ip("203.0.113.1")}); len(c) != 1 || c[0] != ip("203.0.113.0") {
		t.Fatalf("conflicts = %v, want [203.0.113.0]", c)
	}
	if _, ok := a.Release("ns/foreign"); ok {
		t.Fatal("Release of a reservation reported an allocation")
	}
	if al, ok := onlyHeld(a.Lookup("ns/ours")); !ok || al.Address != ip("203.0.113.0") {
		t.Fatalf("ours = %+v, %v after the foreign Service went", al, ok)
	}
	if al, err := only(a.Allocate("ns/next", Request{Pool: "prod-a-1"})); err != nil || al.Address != ip("203.0.113.1") {
		t.Fatalf("next = %s, %v; want 203.0.113.1 freed by the released reservation", al.Address, err)
	}
}
