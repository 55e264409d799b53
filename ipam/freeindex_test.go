package ipam

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// naiveLowest is the reference: walk the prefix from its start.
func naiveLowest(p netip.Prefix, avoidBuggy bool, taken map[netip.Addr]bool) (netip.Addr, bool) {
	for a := p.Addr(); a.IsValid() && p.Contains(a); a = a.Next() {
		if avoidBuggy && isBuggy(a) || taken[a] {
			continue
		}
		return a, true
	}
	return netip.Addr{}, false
}

// TestPrefixIndexMatchesAWalk runs random takes, frees and lowest-free
// lookups against the index and against a walk of the prefix, which is
// what the allocator did before; both must agree at every step.
func TestPrefixIndexMatchesAWalk(t *testing.T) {
	tests := map[string]struct {
		prefix     string
		avoidBuggy bool
	}{
		"/32":                {"203.0.113.9/32", false},
		"/29":                {"203.0.113.8/29", false},
		"/26 upper half":     {"203.0.113.192/26", true},
		"/22 avoiding buggy": {"198.18.4.0/22", true},
		"/20":                {"198.18.0.0/20", false},
		"IPv6 /120":          {"2001:db8::100/120", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := netip.MustParsePrefix(tc.prefix)
			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			x := newPrefixIndex(p, tc.avoidBuggy)
			taken := map[netip.Addr]bool{}
			var held []netip.Addr
			size := int(prefixSize(p))
			for step := range 3 * size {
				switch r := rng.IntN(10); {
				case r < 6: // take the lowest free, as Allocate does
					want, wok := naiveLowest(p, tc.avoidBuggy, taken)
					got, gok := x.lowestFree()
					if got != want || gok != wok {
						t.Fatalf("step %d: lowestFree = %s %v, walk = %s %v", step, got, gok, want, wok)
					}
					if gok {
						x.take(got)
						taken[got], held = true, append(held, got)
					}
				case r < 8: // take a random address, as Assign does
					a := x.addrAt(uint64(rng.IntN(size)))
					if !taken[a] && (!tc.avoidBuggy || !isBuggy(a)) {
						x.take(a)
						taken[a], held = true, append(held, a)
					}
				default: // free a random held address, as Release does
					if len(held) == 0 {
						continue
					}
					i := rng.IntN(len(held))
					x.free(held[i])
					delete(taken, held[i])
					held = append(held[:i], held[i+1:]...)
				}
			}
		})
	}
}

// TestPrefixIndexLargeIPv6: an address taken far into a /64 (beyond any
// window) is remembered, and the window never grows to the prefix.
func TestPrefixIndexLargeIPv6(t *testing.T) {
	p := netip.MustParsePrefix("2001:db8:1::/64")
	x := newPrefixIndex(p, false)
	far := netip.MustParseAddr("2001:db8:1::ffff:ffff:ffff:fffe")
	x.take(far)
	for i := range 1000 {
		a, ok := x.lowestFree()
		if !ok || a == far {
			t.Fatalf("allocation %d: %s %v", i, a, ok)
		}
		x.take(a)
	}
	if a, _ := x.lowestFree(); a != netip.MustParseAddr("2001:db8:1::3e8") {
		t.Fatalf("after 1000 allocations lowest free = %s, want 2001:db8:1::3e8", a)
	}
	if n := x.bits.len(); n > 4096 {
		t.Fatalf("window of %d offsets for 1000 allocations", n)
	}
	if off, ok := x.offset(far); !ok || x.addrAt(off) != far {
		t.Fatalf("offset of %s = %d %v", far, off, ok)
	}
}

// TestBitsetFirstClear covers the summary levels: a set of 64^2+1 bits
// filled one by one, then holes opened and filled from the lowest.
func TestBitsetFirstClear(t *testing.T) {
	var b bitset
	const n = 64*64 + 1
	b.grow((n + 63) / 64)
	for i := range b.len() {
		got, ok := b.firstClear()
		if !ok || got != i {
			t.Fatalf("firstClear = %d %v, want %d", got, ok, i)
		}
		b.set(i)
	}
	if _, ok := b.firstClear(); ok {
		t.Fatal("firstClear found a clear bit in a full set")
	}
	for _, i := range []uint64{4000, 63, 64 * 64} {
		b.clear(i)
	}
	for _, want := range []uint64{63, 4000, 64 * 64} {
		got, ok := b.firstClear()
		if !ok || got != want {
			t.Fatalf("firstClear = %d %v, want %d", got, ok, want)
		}
		b.set(got)
	}
}
