package ipam

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
)

func mustConfig(t *testing.T, clusters []L4Cluster, pools []VIPPool) *Config {
	t.Helper()
	c, err := NewConfig(clusters, pools)
	if err != nil {
		t.Fatalf("NewConfig: %v", err)
	}
	return c
}

func pfx(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, v := range s {
		out[i] = netip.MustParsePrefix(v)
	}
	return out
}

// scenarioConfig: production has two clusters (prod-a small, prod-b), dev
// one cluster with a two-address pool.
func scenarioConfig(t *testing.T) *Config {
	return mustConfig(t,
		[]L4Cluster{
			{Name: "prod-a", Environment: "production", Capacity: 3},
			{Name: "prod-b", Environment: "production"},
			{Name: "dev-a", Environment: "dev"},
		},
		[]VIPPool{
			{Name: "prod-a-1", L4Cluster: "prod-a", Prefixes: pfx("203.0.113.0/29")},
			{Name: "prod-b-1", L4Cluster: "prod-b", Prefixes: pfx("203.0.113.64/28")},
			{Name: "dev-1", L4Cluster: "dev-a", Prefixes: pfx("198.51.100.10/31")},
		})
}

// TestAllocatorScenario runs one ordered scenario against one allocator;
// each step depends on the state the steps before it left.
func TestAllocatorScenario(t *testing.T) {
	a := New(scenarioConfig(t))
	ip := netip.MustParseAddr
	type step struct {
		name    string
		do      func() (Allocation, error)
		want    netip.Addr // zero: don't care
		cluster string
		err     error
	}
	alloc := func(svc string, req Request) func() (Allocation, error) {
		return func() (Allocation, error) { return only(a.Allocate(svc, req)) }
	}
	prod := Request{Environment: "production"}
	steps := []step{
		{name: "first production VIP goes to the least loaded cluster (tie: by name)", do: alloc("ns/s1", prod), want: ip("203.0.113.0"), cluster: "prod-a"},
		{name: "next one goes to the other, now less loaded, cluster", do: alloc("ns/s2", prod), want: ip("203.0.113.64"), cluster: "prod-b"},
		{name: "idempotent re-allocation returns the same VIP", do: alloc("ns/s1", prod), want: ip("203.0.113.0"), cluster: "prod-a"},
		{name: "specific address honoured when free", do: alloc("ns/s3", Request{Addresses: []netip.Addr{ip("203.0.113.70")}}), want: ip("203.0.113.70"), cluster: "prod-b"},
		{name: "can't grab another's IP", do: alloc("ns/s4", Request{Addresses: []netip.Addr{ip("203.0.113.0")}}), err: ErrInUse},
		{name: "specific address outside every pool", do: alloc("ns/s4", Request{Addresses: []netip.Addr{ip("192.0.2.1")}}), err: ErrNotInPool},
		{name: "specific address in another environment", do: alloc("ns/s4", Request{Environment: "dev", Addresses: []netip.Addr{ip("203.0.113.1")}}), err: ErrNotInPool},
		{name: "pool in another environment", do: alloc("ns/s4", Request{Environment: "dev", Pool: "prod-a-1"}), err: ErrNotInPool},
		{name: "unknown environment", do: alloc("ns/s4", Request{Environment: "staging"}), err: ErrNotInPool},
		{name: "dev pool first address", do: alloc("ns/d1", Request{Pool: "dev-1"}), want: ip("198.51.100.10"), cluster: "dev-a"},
		{name: "dev pool second address", do: alloc("ns/d2", Request{Environment: "dev"}), want: ip("198.51.100.11"), cluster: "dev-a"},
		{name: "pool exhausted is an error", do: alloc("ns/d3", Request{Environment: "dev"}), err: ErrExhausted},
		{name: "release frees the address", do: func() (Allocation, error) {
			if _, ok := a.Release("ns/d1"); !ok {
				return Allocation{}, errors.New("release found no allocation")
			}
			return only(a.Allocate("ns/d3", Request{Environment: "dev"}))
		}, want: ip("198.51.100.10"), cluster: "dev-a"},
		{name: "release of an unknown Service changes nothing", do: func() (Allocation, error) {
			if _, ok := a.Release("ns/nope"); ok {
				return Allocation{}, errors.New("released an allocation nobody held")
			}
			return only(a.Allocate("ns/d3", Request{Environment: "dev"}))
		}, want: ip("198.51.100.10")},
		{name: "changed request moves the VIP", do: alloc("ns/s1", Request{Pool: "prod-b-1"}), want: ip("203.0.113.65"), cluster: "prod-b"},
		{name: "failed request keeps the old VIP", do: func() (Allocation, error) {
			if _, err := a.Allocate("ns/s1", Request{Pool: "dev-1"}); !errors.Is(err, ErrExhausted) {
				return Allocation{}, err
			}
			al, _ := onlyHeld(a.Lookup("ns/s1"))
			return al, nil
		}, want: ip("203.0.113.65"), cluster: "prod-b"},
		{name: "the moved-from address is free again", do: alloc("ns/s5", Request{Pool: "prod-a-1"}), want: ip("203.0.113.0"), cluster: "prod-a"},
		{name: "cluster capacity bounds the pool", do: func() (Allocation, error) {
			for _, s := range []string{"ns/c1", "ns/c2"} {
				if _, err := a.Allocate(s, Request{Pool: "prod-a-1"}); err != nil {
					return Allocation{}, err
				}
			}
			return only(a.Allocate("ns/c3", Request{Pool: "prod-a-1"}))
		}, err: ErrExhausted},
		{name: "full cluster is skipped by the scheduler", do: alloc("ns/c3", prod), cluster: "prod-b"},
	}
	for _, s := range steps {
		al, err := s.do()
		if s.err != nil {
			if !errors.Is(err, s.err) {
				t.Fatalf("%s: err = %v, want %v", s.name, err, s.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.want.IsValid() && al.Address != s.want {
			t.Fatalf("%s: got %s, want %s", s.name, al.Address, s.want)
		}
		if s.cluster != "" && al.L4Cluster != s.cluster {
			t.Fatalf("%s: cluster %q, want %q", s.name, al.L4Cluster, s.cluster)
		}
	}
	if u := a.ClusterUsage("prod-a"); u.Used != 3 || u.Free != 0 {
		t.Errorf("prod-a usage = %+v, want 3 used, 0 free", u)
	}
	if u := a.PoolUsage("dev-1"); u.Used != 2 || u.Free != 0 {
		t.Errorf("dev-1 usage = %+v, want 2 used, 0 free", u)
	}
}

// TestNoTwoServicesShareAnAddress fills a pool and checks every address
// went to exactly one Service.
func TestNoTwoServicesShareAnAddress(t *testing.T) {
	a := New(mustConfig(t,
		[]L4Cluster{{Name: "c", Environment: "e"}},
		[]VIPPool{{Name: "p", L4Cluster: "c", Prefixes: pfx("203.0.113.0/24"), AvoidBuggyIPs: true}}))
	seen := map[netip.Addr]string{}
	for i := range 254 {
		svc := "ns/s" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		al, err := only(a.Allocate(svc, Request{Environment: "e"}))
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if isBuggy(al.Address) {
			t.Fatalf("allocation %d got %s despite AvoidBuggyIPs", i, al.Address)
		}
		if prev, dup := seen[al.Address]; dup {
			t.Fatalf("%s given to both %s and %s", al.Address, prev, svc)
		}
		seen[al.Address] = svc
	}
	if _, err := a.Allocate("ns/one-more", Request{Environment: "e"}); !errors.Is(err, ErrExhausted) {
		t.Fatalf("255th allocation: err = %v, want ErrExhausted", err)
	}
	if u := a.PoolUsage("p"); u.Used != 254 || u.Free != 0 {
		t.Fatalf("usage = %+v, want 254 used 0 free", u)
	}
}

// TestAssignRebuildsState checks that allocations read back from the API
// server block those addresses for everyone else, in a pool or not.
func TestAssignRebuildsState(t *testing.T) {
	a := New(scenarioConfig(t))
	ip := netip.MustParseAddr
	if _, err := a.Assign("ns/old", ip("203.0.113.0")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Assign("ns/old", ip("203.0.113.0")); err != nil {
		t.Fatalf("repeated Assign: %v", err)
	}
	if _, err := a.Assign("ns/other", ip("203.0.113.0")); !errors.Is(err, ErrInUse) {
		t.Fatalf("Assign of a held address: err = %v, want ErrInUse", err)
	}
	if al, err := a.Assign("ns/x", ip("192.0.2.1")); err != nil || al.Pool != "" {
		t.Fatalf("Assign outside pools = %+v, %v; want it held with no pool", al, err)
	}
	al, err := only(a.Allocate("ns/new", Request{Pool: "prod-a-1"}))
	if err != nil || al.Address != ip("203.0.113.1") {
		t.Fatalf("Allocate after Assign = %v, %v; want 203.0.113.1", al.Address, err)
	}
	al, err = only(a.Allocate("ns/old", Request{Environment: "production"}))
	if err != nil || al.Address != ip("203.0.113.0") {
		t.Fatalf("Allocate for an assigned Service = %v, %v; want its assigned 203.0.113.0", al.Address, err)
	}
}

// TestSetConfigKeepsAllocations: removing a pool keeps its VIPs owned.
func TestSetConfigKeepsAllocations(t *testing.T) {
	a := New(scenarioConfig(t))
	al, err := only(a.Allocate("ns/s", Request{Pool: "dev-1"}))
	if err != nil {
		t.Fatal(err)
	}
	a.SetConfig(mustConfig(t, []L4Cluster{{Name: "dev-a", Environment: "dev"}}, nil))
	got, ok := onlyHeld(a.Lookup("ns/s"))
	if !ok || got.Address != al.Address || got.Pool != "" {
		t.Fatalf("after pool removal: %+v, %v; want address kept with no pool", got, ok)
	}
	a.SetConfig(scenarioConfig(t))
	if _, err := a.Allocate("ns/t", Request{Addresses: []netip.Addr{al.Address}}); !errors.Is(err, ErrInUse) {
		t.Fatalf("address of a removed-then-restored pool: err = %v, want ErrInUse", err)
	}
	if u := a.PoolUsage("dev-1"); u.Used != 1 {
		t.Fatalf("dev-1 used = %d, want 1 after the pool came back", u.Used)
	}
}

// only returns the one VIP of a single-family allocation.
func only(als []Allocation, err error) (Allocation, error) {
	if err == nil && len(als) != 1 {
		return Allocation{}, fmt.Errorf("got %d allocations %v, want 1", len(als), als)
	}
	if err != nil {
		return Allocation{}, err
	}
	return als[0], nil
}

// onlyHeld returns the one VIP a Service holds.
func onlyHeld(als []Allocation, ok bool) (Allocation, bool) {
	if len(als) != 1 {
		return Allocation{}, false
	}
	return als[0], ok
}
