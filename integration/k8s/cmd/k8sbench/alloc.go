package main

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/tlbproject/tlb/ipam"
)

// allocReference is what 20,000 allocations in one /16 took before the
// allocator found free addresses with a bitmap: it walked the pool from its
// start over every address taken, under its lock (quadratic).
const allocReference = "104 s at load ~17 (issue 10: 2k/5k/10k/20k 0.76/3.3/14.9/104 s), 9.9 s at load ~3 (0.08/0.52/2.3/9.9 s)"

// benchAllocator times n allocations, one after another, in one /16 of
// one allocator (no API server): the cost the controller pays under the
// allocator's lock.
func benchAllocator(n int) (time.Duration, error) {
	cfg, err := ipam.NewConfig(
		[]ipam.L4Cluster{{Name: "bench", Environment: "bench", Capacity: n}},
		[]ipam.VIPPool{{Name: "bench", L4Cluster: "bench", Prefixes: []netip.Prefix{netip.MustParsePrefix("10.64.0.0/16")}, AvoidBuggyIPs: true}})
	if err != nil {
		return 0, err
	}
	a := ipam.New(cfg)
	start := time.Now()
	for i := range n {
		if _, err := a.Allocate(fmt.Sprintf("bench/svc-%05d", i), ipam.Request{Environment: "bench"}); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
