package ipam

import "math/bits"

// bitset is a growable set of offsets 0..len()-1 with a summary hierarchy:
// levels[0] holds one bit per offset, and bit i of levels[k] is set when
// word i of levels[k-1] is full. Setting, clearing and finding the lowest
// clear bit each cost O(log64 n), however many bits are set.
type bitset struct {
	levels [][]uint64
}

// len is how many offsets the set covers.
func (b *bitset) len() uint64 {
	if len(b.levels) == 0 {
		return 0
	}
	return uint64(len(b.levels[0])) * 64
}

// grow extends the set to at least words leaf words of clear bits.
func (b *bitset) grow(words int) {
	if len(b.levels) > 0 && len(b.levels[0]) >= words {
		return
	}
	leaves := make([]uint64, words)
	if len(b.levels) > 0 {
		copy(leaves, b.levels[0])
	}
	b.levels = [][]uint64{leaves}
	// Rebuild the summaries from the leaves: amortised O(1) per bit when
	// the caller doubles the size.
	for below := leaves; len(below) > 1; {
		up := make([]uint64, (len(below)+63)/64)
		for i, w := range below {
			if w == ^uint64(0) {
				up[i/64] |= 1 << (i % 64)
			}
		}
		b.levels = append(b.levels, up)
		below = up
	}
}

// set marks offset i; i must be below len().
func (b *bitset) set(i uint64) {
	for _, lvl := range b.levels {
		w := &lvl[i/64]
		*w |= 1 << (i % 64)
		if *w != ^uint64(0) {
			return
		}
		i /= 64 // the word is full: mark it in the level above
	}
}

// clear unmarks offset i; i must be below len().
func (b *bitset) clear(i uint64) {
	for _, lvl := range b.levels {
		w := &lvl[i/64]
		wasFull := *w == ^uint64(0)
		*w &^= 1 << (i % 64)
		if !wasFull {
			return
		}
		i /= 64 // the word is no longer full: unmark it above
	}
}

// firstClear returns the lowest clear offset; ok is false when every
// offset is set.
func (b *bitset) firstClear() (uint64, bool) {
	if len(b.levels) == 0 {
		return 0, false
	}
	var i uint64 // index of the word to look at in the current level
	for k := len(b.levels) - 1; k >= 0; k-- {
		lvl := b.levels[k]
		if i >= uint64(len(lvl)) {
			// The first non-full child is past the end: all are full.
			return 0, false
		}
		free := ^lvl[i]
		if free == 0 {
			return 0, false
		}
		i = i*64 + uint64(bits.TrailingZeros64(free))
	}
	return i, true
}
