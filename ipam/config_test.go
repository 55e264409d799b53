package ipam

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestNewConfigRejects(t *testing.T) {
	good := []L4Cluster{{Name: "c", Environment: "e"}}
	tests := map[string]struct {
		clusters []L4Cluster
		pools    []VIPPool
		want     string
	}{
		"cluster without environment": {clusters: []L4Cluster{{Name: "c"}}, want: `L4Cluster "c": spec.environment`},
		"negative capacity":           {clusters: []L4Cluster{{Name: "c", Environment: "e", Capacity: -1}}, want: "spec.capacity"},
		"duplicate cluster":           {clusters: []L4Cluster{good[0], good[0]}, want: "defined twice"},
		"unknown cluster":             {clusters: good, pools: []VIPPool{{Name: "p", L4Cluster: "x", Prefixes: pfx("203.0.113.0/24")}}, want: `VIPPool "p": spec.l4Cluster "x"`},
		"no cidrs":                    {clusters: good, pools: []VIPPool{{Name: "p", L4Cluster: "c"}}, want: "spec.cidrs is empty"},
		"unmasked cidr": {clusters: good, pools: []VIPPool{{Name: "p", L4Cluster: "c", Prefixes: pfx("203.0.113.7/24")}},
			want: "spec.cidrs[0] 203.0.113.7/24 is not a network address (want 203.0.113.0/24)"},
		"overlap across pools": {clusters: good, pools: []VIPPool{
			{Name: "a", L4Cluster: "c", Prefixes: pfx("203.0.113.0/24")},
			{Name: "b", L4Cluster: "c", Prefixes: pfx("198.51.100.0/24", "203.0.113.128/25")},
		}, want: "overlaps"},
		"overlap within a pool": {clusters: good, pools: []VIPPool{
			{Name: "a", L4Cluster: "c", Prefixes: pfx("203.0.113.0/25", "203.0.113.0/24")},
		}, want: "overlaps"},
		"duplicate pool": {clusters: good, pools: []VIPPool{
			{Name: "a", L4Cluster: "c", Prefixes: pfx("203.0.113.0/25")},
			{Name: "a", L4Cluster: "c", Prefixes: pfx("198.51.100.0/25")},
		}, want: "defined twice"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := NewConfig(tc.clusters, tc.pools)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalidConfig containing %q", err, tc.want)
			}
		})
	}
}

func TestPoolSize(t *testing.T) {
	tests := map[string]struct {
		pool VIPPool
		want uint64
	}{
		"ipv4 /24":               {VIPPool{Prefixes: pfx("203.0.113.0/24")}, 256},
		"ipv4 /24 avoid buggy":   {VIPPool{Prefixes: pfx("203.0.113.0/24"), AvoidBuggyIPs: true}, 254},
		"ipv4 /22 avoid buggy":   {VIPPool{Prefixes: pfx("198.18.0.0/22"), AvoidBuggyIPs: true}, 1016},
		"ipv4 /25 avoid buggy":   {VIPPool{Prefixes: pfx("203.0.113.128/25"), AvoidBuggyIPs: true}, 127},
		"ipv4 /32":               {VIPPool{Prefixes: pfx("203.0.113.9/32")}, 1},
		"two prefixes":           {VIPPool{Prefixes: pfx("203.0.113.0/30", "198.51.100.0/31")}, 6},
		"ipv6 /120":              {VIPPool{Prefixes: pfx("2001:db8::/120")}, 256},
		"ipv6 /64 saturates":     {VIPPool{Prefixes: pfx("2001:db8::/64")}, math.MaxUint64},
		"ipv6 two huge saturate": {VIPPool{Prefixes: pfx("2001:db8::/64", "2001:db8:1::/64")}, math.MaxUint64},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.pool.size(); got != tc.want {
				t.Fatalf("size = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestIPv6Pool shows the types carry IPv6 through allocation.
func TestIPv6Pool(t *testing.T) {
	a := New(mustConfig(t, []L4Cluster{{Name: "c", Environment: "e"}},
		[]VIPPool{{Name: "v6", L4Cluster: "c", Prefixes: pfx("2001:db8::/64")}}))
	al, err := only(a.Allocate("ns/s", Request{Environment: "e"}))
	if err != nil || al.Address.String() != "2001:db8::" {
		t.Fatalf("Allocate = %v, %v", al.Address, err)
	}
	if u := a.ClusterUsage("c"); u.Used != 1 || u.Free != DefaultL4ClusterCapacity-1 {
		t.Fatalf("cluster usage = %+v", u)
	}
}

// TestConfigErrorNamesTheObject: the controller puts a refusal in the
// status of the object the error names.
func TestConfigErrorNamesTheObject(t *testing.T) {
	good := []L4Cluster{{Name: "c", Environment: "e"}}
	tests := map[string]struct {
		clusters         []L4Cluster
		pools            []VIPPool
		wantKind, wantNm string
	}{
		"cluster without environment": {clusters: []L4Cluster{{Name: "c"}}, wantKind: "L4Cluster", wantNm: "c"},
		"pool naming no cluster":      {clusters: good, pools: []VIPPool{{Name: "p", L4Cluster: "x", Prefixes: pfx("203.0.113.0/24")}}, wantKind: "VIPPool", wantNm: "p"},
		"the later of two overlapping pools": {clusters: good, pools: []VIPPool{
			{Name: "a", L4Cluster: "c", Prefixes: pfx("203.0.113.0/24")},
			{Name: "b", L4Cluster: "c", Prefixes: pfx("203.0.113.128/25")},
		}, wantKind: "VIPPool", wantNm: "b"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := NewConfig(tc.clusters, tc.pools)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Kind != tc.wantKind || ce.Name != tc.wantNm {
				t.Fatalf("err = %#v, want a ConfigError naming %s %q", err, tc.wantKind, tc.wantNm)
			}
			if !strings.HasPrefix(err.Error(), ErrInvalidConfig.Error()+": ") {
				t.Fatalf("message %q does not start with %q", err, ErrInvalidConfig)
			}
		})
	}
}
