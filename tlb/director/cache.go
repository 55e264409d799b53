package director

import (
	"slices"
	"time"

	"github.com/tlbproject/tlb/tlb/model"
)

// DefaultFullListAfter is the longest a reconcile relies on remembered
// real-server lists when Options.FullListAfter is 0. With the default
// 30 s resync, every second or third resync lists everything.
const DefaultFullListAfter = time.Minute

// Listing the actual state without asking for every real server.
//
// Listing one service's real servers is one netlink round trip, so with
// 1,000 services a reconcile spent most of its time listing real servers
// it was not going to change. The director therefore remembers, per
// service, what the kernel holds after the last reconcile that succeeded:
// the desired service it applied (scheduler, flags, real servers in
// canonical order). A reconcile still lists every service (one
// GetServices), so a service added, deleted or changed behind the
// director's back is seen every time; it lists a service's real servers
// unless the kernel reports the remembered scheduler and flags AND the
// desired service is the one remembered. Such a service is Remembered:
// its plan is empty by construction and is not computed. A service that
// is new, changed in the model or changed in the kernel is listed and
// planned as before, canonical order included.
//
// What a GetServices cannot show is a real server changed behind the
// director's back. A full listing (every service's real servers) repairs
// that: on the first reconcile, after any error, on ReconcileFull, and
// when the last full listing is older than Options.FullListAfter. Such
// drift is thus repaired within FullListAfter plus one resync interval.

// destCache is the remembered state; the zero value is empty (the next
// reconcile lists everything). It keeps the desired services (sorted,
// defaults applied) the last successful reconcile made the kernel hold:
// by then the kernel held exactly those, real servers in canonical order.
type destCache struct {
	services map[model.Key]model.Service
	fullAt   time.Time // when the last full listing was taken
}

// fresh reports whether a reconcile at now may use the cache.
func (c *destCache) fresh(now time.Time, maxAge time.Duration) bool {
	return c.services != nil && now.Sub(c.fullAt) < maxAge
}

// reuse returns the test listActual applies to a kernel service (real
// servers not listed): true when the kernel reports the remembered
// scheduler and flags and the desired service (in wanted) is the one
// remembered, so the kernel's real servers are the desired ones.
func (c *destCache) reuse(wanted map[model.Key]model.Service) func(actualService) bool {
	return func(kernel actualService) bool {
		had, ok := c.services[kernel.Key]
		if !ok || kernel.Scheduler != string(had.Scheduler) || kernel.Flags != model.FlagBits(had.Flags) {
			return false
		}
		want, ok := wanted[kernel.Key]
		return ok && sameService(want, had)
	}
}

// store remembers wanted as the kernel's state; listedAt is the time of
// the listing the reconcile was based on, the new full-listing time when
// it was a full one.
func (c *destCache) store(wanted map[model.Key]model.Service, full bool, listedAt time.Time) {
	c.services = wanted
	if full {
		c.fullAt = listedAt
	}
}

// clear forgets everything: the next reconcile is a full listing.
func (c *destCache) clear() { *c = destCache{} }

// byKey indexes desired (sorted, defaults applied) by service key.
func byKey(desired model.Desired) map[model.Key]model.Service {
	out := make(map[model.Key]model.Service, len(desired.Services))
	for _, s := range desired.Services {
		out[s.Key()] = s
	}
	return out
}

// sameService reports whether a and b (sorted, defaults applied) program
// the same kernel state.
func sameService(a, b model.Service) bool {
	return a.Key() == b.Key() && a.Scheduler == b.Scheduler && model.FlagBits(a.Flags) == model.FlagBits(b.Flags) &&
		slices.Equal(a.RealServers, b.RealServers)
}
