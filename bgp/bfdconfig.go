package bgp

import (
	"time"

	"github.com/tlbproject/tlb/bgp/bfd"
)

// Defaults and bounds of a peer's BFD settings. With the defaults the
// router declares a silent director lost after 5 x 100 ms.
const (
	// DefaultBFDMinIntervalMilliseconds is the default minimum transmit and receive interval.
	DefaultBFDMinIntervalMilliseconds = 100
	// DefaultBFDMultiplier is the default detection multiplier.
	DefaultBFDMultiplier = 5
	// minBFDIntervalMilliseconds and maxBFDIntervalMilliseconds bound the
	// intervals: faster is beyond what a loaded node keeps, slower is no
	// better than the BGP hold time.
	minBFDIntervalMilliseconds = 10
	maxBFDIntervalMilliseconds = 10000
)

// BFDConfig turns on BFD (RFC 5880, single hop as RFC 5881) with one
// peer: while the BFD session is down after having been up, the BGP
// session with the peer is shut, and the router, running BFD too, drops
// this director's routes within the detection time instead of the hold time.
type BFDConfig struct {
	// Enabled turns BFD on for the peer.
	Enabled bool `json:"enabled,omitempty"`
	// MinRxMilliseconds is the fastest we accept packets from the peer;
	// DefaultBFDMinIntervalMilliseconds when zero.
	MinRxMilliseconds uint32 `json:"minRxMilliseconds,omitempty"`
	// MinTxMilliseconds is the fastest we want to send to the peer;
	// DefaultBFDMinIntervalMilliseconds when zero.
	MinTxMilliseconds uint32 `json:"minTxMilliseconds,omitempty"`
	// Multiplier is how many intervals the peer waits before it declares us
	// lost; DefaultBFDMultiplier when zero, at most 255.
	Multiplier uint32 `json:"multiplier,omitempty"`
}

// defaulted fills the unset fields of an enabled BFDConfig.
func (b BFDConfig) defaulted() BFDConfig {
	if !b.Enabled {
		return b
	}
	if b.MinRxMilliseconds == 0 {
		b.MinRxMilliseconds = DefaultBFDMinIntervalMilliseconds
	}
	if b.MinTxMilliseconds == 0 {
		b.MinTxMilliseconds = DefaultBFDMinIntervalMilliseconds
	}
	if b.Multiplier == 0 {
		b.Multiplier = DefaultBFDMultiplier
	}
	return b
}

// check validates a defaulted peer's BFD settings; f names the peer's fields.
func (b BFDConfig) check(ps *problems, f func(string) string, p PeerConfig) {
	if !b.Enabled {
		if b != (BFDConfig{}) {
			ps.add(f("bfd.enabled"), "is false but other bfd fields are set")
		}
		return
	}
	intervals := []struct {
		name string
		v    uint32
	}{{"bfd.minRxMilliseconds", b.MinRxMilliseconds}, {"bfd.minTxMilliseconds", b.MinTxMilliseconds}}
	for _, iv := range intervals {
		if iv.v < minBFDIntervalMilliseconds || iv.v > maxBFDIntervalMilliseconds {
			ps.add(f(iv.name), "%d is outside %d-%d", iv.v, minBFDIntervalMilliseconds, maxBFDIntervalMilliseconds)
		}
	}
	if b.Multiplier > 255 {
		ps.add(f("bfd.multiplier"), "%d is above 255", b.Multiplier)
	}
	if p.EBGPMultihopTTL != 0 {
		ps.add(f("bfd.enabled"), "single-hop BFD (RFC 5881) cannot reach a peer ebgpMultihopTTL says is hops away")
	}
}

// timing is the bfd package's view of a validated, enabled BFDConfig.
func (b BFDConfig) timing() bfd.Timing {
	return bfd.Timing{
		DesiredMinTx:  time.Duration(b.MinTxMilliseconds) * time.Millisecond,
		RequiredMinRx: time.Duration(b.MinRxMilliseconds) * time.Millisecond,
		DetectMult:    uint8(b.Multiplier),
	}
}
