package gatewayctl

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// firstRecheck is how soon the controller looks again for the IPAM's
// reason once a Gateway starts waiting for a VIP.
const firstRecheck = 500 * time.Millisecond

// recheck paces the looks at the IPAM's warnings while Gateways wait for
// their VIPs: firstRecheck after the set of waiting Gateways changes,
// then twice as long each time, up to max.
type recheck struct {
	mu      sync.Mutex
	max     time.Duration
	delay   time.Duration
	waiting []types.NamespacedName
}

// next returns the delay before the next look, waiting being the
// Gateways that wait now.
func (r *recheck) next(waiting []types.NamespacedName) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	slices.SortFunc(waiting, compareNames)
	if !slices.Equal(waiting, r.waiting) || r.delay == 0 {
		r.waiting, r.delay = waiting, min(firstRecheck, r.max)
		return r.delay
	}
	r.delay = min(2*r.delay, r.max)
	return r.delay
}

// reset forgets the waiting Gateways: none waits.
func (r *recheck) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting, r.delay = nil, 0
}
