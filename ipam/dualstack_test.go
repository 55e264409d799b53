package ipam

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
)

// dualStackConfig: production has cluster v4only (IPv4 pool only) and
// cluster dual (one IPv4 and one IPv6 pool); staging one cluster with a
// mixed pool; lab one cluster with an IPv6 pool only.
func dualStackConfig(t *testing.T) *Config {
	return mustConfig(t,
		[]L4Cluster{
			{Name: "v4only", Environment: "production"},
			{Name: "dual", Environment: "production", Capacity: 5},
			{Name: "mixed", Environment: "staging"},
			{Name: "v6lab", Environment: "lab"},
		},
		[]VIPPool{
			{Name: "v4only-1", L4Cluster: "v4only", Prefixes: pfx("198.51.100.0/30")},
			{Name: "dual-v4", L4Cluster: "dual", Prefixes: pfx("203.0.113.0/30")},
			{Name: "dual-v6", L4Cluster: "dual", Prefixes: pfx("2001:db8:1::/126")},
			{Name: "mixed", L4Cluster: "mixed", Prefixes: pfx("2001:db8:2::/64", "192.0.2.0/28")},
			{Name: "v6lab-1", L4Cluster: "v6lab", Prefixes: pfx("2001:db8:3::/120")},
		})
}

func addrsOf(als []Allocation) []netip.Addr {
	out := make([]netip.Addr, len(als))
	for i, al := range als {
		out[i] = al.Address
	}
	return out
}

// TestDualStackScenario runs one ordered scenario of dual-stack requests
// against one allocator.
func TestDualStackScenario(t *testing.T) {
	a := New(dualStackConfig(t))
	ip := netip.MustParseAddr
	both := []Family{IPv4, IPv6}
	steps := []struct {
		name    string
		svc     string
		req     Request
		want    []netip.Addr
		cluster string
		err     error
	}{
		{name: "require dual stack skips the IPv4-only cluster", svc: "ns/d1",
			req:  Request{Environment: "production", Families: both, Stack: RequireDualStack},
			want: []netip.Addr{ip("203.0.113.0"), ip("2001:db8:1::")}, cluster: "dual"},
		{name: "the order of spec.ipFamilies is kept", svc: "ns/d2",
			req:  Request{Environment: "production", Families: []Family{IPv6, IPv4}, Stack: RequireDualStack},
			want: []netip.Addr{ip("2001:db8:1::1"), ip("203.0.113.1")}, cluster: "dual"},
		{name: "single stack takes the first family only", svc: "ns/s6",
			req:  Request{Pool: "dual-v6", Families: []Family{IPv6, IPv4}},
			want: []netip.Addr{ip("2001:db8:1::2")}, cluster: "dual"},
		{name: "require dual stack with the dual cluster full fails", svc: "ns/d3",
			req: Request{Environment: "production", Families: both, Stack: RequireDualStack}, err: ErrExhausted},
		{name: "prefer dual stack falls back to one family", svc: "ns/d3",
			req:  Request{Environment: "production", Families: both, Stack: PreferDualStack},
			want: []netip.Addr{ip("198.51.100.0")}, cluster: "v4only"},
		{name: "a mixed pool serves both families alone", svc: "ns/m1",
			req:  Request{Pool: "mixed", Families: both, Stack: RequireDualStack},
			want: []netip.Addr{ip("192.0.2.0"), ip("2001:db8:2::")}, cluster: "mixed"},
		{name: "one address per family honoured", svc: "ns/m2",
			req:  Request{Addresses: []netip.Addr{ip("192.0.2.9"), ip("2001:db8:2::9")}, Families: both, Stack: RequireDualStack},
			want: []netip.Addr{ip("192.0.2.9"), ip("2001:db8:2::9")}, cluster: "mixed"},
		{name: "one requested address, the other family allocated beside it", svc: "ns/m3",
			req:  Request{Addresses: []netip.Addr{ip("2001:db8:2::7")}, Families: both, Stack: RequireDualStack},
			want: []netip.Addr{ip("192.0.2.1"), ip("2001:db8:2::7")}, cluster: "mixed"},
		{name: "addresses of two L4 clusters refused", svc: "ns/x",
			req: Request{Addresses: []netip.Addr{ip("192.0.2.10"), ip("2001:db8:3::1")}, Families: both, Stack: RequireDualStack}, err: ErrNotInPool},
		{name: "an address of a family the Service does not ask for is refused", svc: "ns/x",
			req: Request{Addresses: []netip.Addr{ip("2001:db8:3::1")}, Families: []Family{IPv4}}, err: ErrNotInPool},
		{name: "require dual stack in an IPv6-only environment names the missing family", svc: "ns/x",
			req: Request{Environment: "lab", Families: both, Stack: RequireDualStack}, err: ErrNotInPool},
		{name: "an IPv6-only Service in an IPv6-only environment", svc: "ns/v6",
			req:  Request{Environment: "lab", Families: []Family{IPv6}},
			want: []netip.Addr{ip("2001:db8:3::")}, cluster: "v6lab"},
	}
	for _, s := range steps {
		als, err := a.Allocate(s.svc, s.req)
		if s.err != nil {
			if !errors.Is(err, s.err) {
				t.Fatalf("%s: err = %v, want %v", s.name, err, s.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := addrsOf(als); !slices.Equal(got, s.want) {
			t.Fatalf("%s: got %v, want %v", s.name, got, s.want)
		}
		for _, al := range als {
			if al.L4Cluster != s.cluster {
				t.Fatalf("%s: %s in L4Cluster %q, want %q", s.name, al.Address, al.L4Cluster, s.cluster)
			}
		}
	}
	if u := a.ClusterUsage("dual"); u.Used != 5 || u.Free != 0 {
		t.Fatalf("dual usage %+v, want 5 used (a dual-stack Service counts two VIPs) and 0 free", u)
	}
}

// TestDualStackKeepsAndChanges: a Service keeps its VIPs across
// requests, gains the second family when a pool of it comes, and frees it
// when it turns single-stack.
func TestDualStackKeepsAndChanges(t *testing.T) {
	ip := netip.MustParseAddr
	clusters := []L4Cluster{{Name: "c", Environment: "e"}}
	v4 := VIPPool{Name: "v4", L4Cluster: "c", Prefixes: pfx("203.0.113.0/30")}
	v6 := VIPPool{Name: "v6", L4Cluster: "c", Prefixes: pfx("2001:db8::/126")}
	a := New(mustConfig(t, clusters, []VIPPool{v4}))
	prefer := Request{Environment: "e", Families: []Family{IPv4, IPv6}, Stack: PreferDualStack}

	if _, err := a.Assign("ns/s", ip("203.0.113.2")); err != nil { // read back from status
		t.Fatal(err)
	}
	als, err := a.Allocate("ns/s", prefer)
	if err != nil || !slices.Equal(addrsOf(als), []netip.Addr{ip("203.0.113.2")}) {
		t.Fatalf("no IPv6 pool: got %v, %v; want the held 203.0.113.2 alone", addrsOf(als), err)
	}
	a.SetConfig(mustConfig(t, clusters, []VIPPool{v4, v6}))
	als, err = a.Allocate("ns/s", prefer)
	if err != nil || !slices.Equal(addrsOf(als), []netip.Addr{ip("203.0.113.2"), ip("2001:db8::")}) {
		t.Fatalf("IPv6 pool added: got %v, %v; want the IPv4 VIP kept and 2001:db8:: added", addrsOf(als), err)
	}
	if _, err := a.Allocate("ns/t", Request{Addresses: []netip.Addr{ip("2001:db8::")}}); !errors.Is(err, ErrInUse) {
		t.Fatalf("another Service took the IPv6 VIP of ns/s: %v", err)
	}
	als, err = a.Allocate("ns/s", Request{Environment: "e", Families: []Family{IPv4, IPv6}})
	if err != nil || !slices.Equal(addrsOf(als), []netip.Addr{ip("203.0.113.2")}) {
		t.Fatalf("single stack: got %v, %v; want 203.0.113.2 alone", addrsOf(als), err)
	}
	if u := a.PoolUsage("v6"); u.Used != 0 {
		t.Fatalf("the IPv6 VIP of a now single-stack Service is still held: %+v", u)
	}
	if got, _ := a.Lookup("ns/s"); len(got) != 1 {
		t.Fatalf("Lookup after single stack: %v", got)
	}
	released, ok := a.Release("ns/s")
	if !ok || len(released) != 1 || a.ClusterUsage("c").Used != 0 {
		t.Fatalf("Release: %v %v, cluster usage %+v", released, ok, a.ClusterUsage("c"))
	}
}
