package ipam

import (
	"encoding/binary"
	"net/netip"
)

// prefixIndex finds the lowest free address of one CIDR of a pool without
// walking the addresses already taken.
//
// Its bitset covers a window of the first offsets of the prefix; the
// window doubles when every offset in it is taken, so its size stays
// within about twice the number of addresses taken (the lowest free
// offset is never above that number). Taken addresses above the window
// wait in beyond and move into the bitset when the window reaches them.
// This works alike for a /30 and an IPv6 /64.
type prefixIndex struct {
	prefix     netip.Prefix
	size       uint64 // addresses in prefix, saturated at MaxUint64
	avoidBuggy bool
	bits       bitset
	beyond     map[netip.Addr]struct{}
}

func newPrefixIndex(p netip.Prefix, avoidBuggy bool) *prefixIndex {
	return &prefixIndex{prefix: p, size: prefixSize(p), avoidBuggy: avoidBuggy && p.Addr().Is4(), beyond: map[netip.Addr]struct{}{}}
}

// take marks addr, an address of the prefix, as not free.
func (x *prefixIndex) take(addr netip.Addr) {
	if off, ok := x.offset(addr); ok && off < x.bits.len() {
		x.bits.set(off)
		return
	}
	x.beyond[addr] = struct{}{}
}

// free marks addr, an address of the prefix, as free again; buggy
// addresses of a pool that avoids them stay taken.
func (x *prefixIndex) free(addr netip.Addr) {
	if x.avoidBuggy && isBuggy(addr) {
		return
	}
	if off, ok := x.offset(addr); ok && off < x.bits.len() {
		x.bits.clear(off)
		return
	}
	delete(x.beyond, addr)
}

// lowestFree returns the lowest free address of the prefix.
func (x *prefixIndex) lowestFree() (netip.Addr, bool) {
	for {
		if off, ok := x.bits.firstClear(); ok {
			return x.addrAt(off), true
		}
		if x.bits.len() >= x.size {
			return netip.Addr{}, false
		}
		x.growWindow()
	}
}

// growWindow doubles the window (at least one word, at most the prefix),
// marking what the new part holds: offsets past the prefix, buggy
// addresses, and the taken addresses waiting in beyond.
func (x *prefixIndex) growWindow() {
	from := x.bits.len()
	words := max(1, 2*len(x.bitsLeaves()))
	if limit := (x.size + 63) / 64; x.size != ^uint64(0) && uint64(words) > limit {
		words = int(limit)
	}
	x.bits.grow(words)
	to := x.bits.len()
	for off := max(from, x.size); off < to; off++ {
		x.bits.set(off) // past the end of a prefix smaller than a word
	}
	if x.avoidBuggy {
		for off := from; off < min(to, x.size); off++ {
			if isBuggy(x.addrAt(off)) {
				x.bits.set(off)
			}
		}
	}
	for addr := range x.beyond {
		if off, ok := x.offset(addr); ok && off < to {
			x.bits.set(off)
			delete(x.beyond, addr)
		}
	}
}

func (x *prefixIndex) bitsLeaves() []uint64 {
	if len(x.bits.levels) == 0 {
		return nil
	}
	return x.bits.levels[0]
}

// offset is addr's distance from the start of the prefix; ok is false
// when it does not fit in 64 bits (far into a large IPv6 prefix).
func (x *prefixIndex) offset(addr netip.Addr) (uint64, bool) {
	hi, lo := split(addr)
	bhi, blo := split(x.prefix.Addr())
	d := lo - blo
	if lo < blo {
		hi-- // borrow
	}
	return d, hi == bhi
}

// addrAt is the address off addresses after the start of the prefix.
func (x *prefixIndex) addrAt(off uint64) netip.Addr {
	base := x.prefix.Addr()
	if base.Is4() {
		b := base.As4()
		v := binary.BigEndian.Uint32(b[:]) + uint32(off)
		binary.BigEndian.PutUint32(b[:], v)
		return netip.AddrFrom4(b)
	}
	hi, lo := split(base)
	nlo := lo + off
	if nlo < lo {
		hi++ // carry
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], nlo)
	return netip.AddrFrom16(b)
}

// split returns the 128-bit form of addr as two halves (IPv4 in the low
// half).
func split(addr netip.Addr) (hi, lo uint64) {
	if addr.Is4() {
		b := addr.As4()
		return 0, uint64(binary.BigEndian.Uint32(b[:]))
	}
	b := addr.As16()
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}
