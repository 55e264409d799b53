//go:build !lab

package bgp_test

import "github.com/tlbproject/tlb/bgp/birdlab"

// hasNextHops matches exactly these next hops (sorted, as Routes returns them).
func hasNextHops(want ...string) func([]birdlab.Route) bool {
	return func(rs []birdlab.Route) bool {
		if len(rs) != len(want) {
			return false
		}
		for i, r := range rs {
			if r.NextHop != want[i] {
				return false
			}
		}
		return true
	}
}
