package main

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

// singleChanges is how many single changes drainOne times.
const singleChanges = 7

// singleChange is the median of several single changes: wall time, the
// director's own time and the kernel's (each the median of its own).
type singleChange struct {
	total, controller, kernel time.Duration
}

// drainOne is step 4: one real server of one VIP drained (weight 1 ->
// 0) and restored, alternately, singleChanges times, ending drained; each
// must take one netlink write and list nothing. Their median is the
// figure, so that a garbage collection or a scheduling hiccup of the
// loaded host does not decide it alone. It returns the changed model.
func drainOne(ctx context.Context, r *report, d *director.Director, h *ipvs.Handle, desired model.Desired, realServers int, f *figures) (model.Desired, error) {
	vips := len(desired.Services)
	changed := again(desired)
	changed.Services[vips/2].RealServers[realServers/2].Weight = 0
	var total, controller, kernel []time.Duration
	for i := range singleChanges {
		m := changed
		if i%2 == 1 {
			m = desired
		}
		res, err := d.Reconcile(ctx, again(m))
		if err != nil {
			return model.Desired{}, fmt.Errorf("single change: %w", err)
		}
		r.info("single real-server change (drain or restore one): %v (kernel %v, director %v), %d netlink writes, full listing: %v, services listed %d, cached %d",
			res.Duration, res.KernelTime, res.ControllerTime(), res.Writes, res.FullListing, res.Plan.Listed, res.Plan.Cached)
		if res.Writes != 1 || res.FullListing {
			return model.Desired{}, fmt.Errorf("single change made %d writes, full listing %v; want 1 write, planned from memory", res.Writes, res.FullListing)
		}
		f.singleListed = max(f.singleListed, res.Plan.Listed)
		total, controller, kernel = append(total, res.Duration), append(controller, res.ControllerTime()), append(kernel, res.KernelTime)
	}
	f.single = singleChange{total: median(total), controller: median(controller), kernel: median(kernel)}
	r.info("single change, median of %d: %v (kernel %v, director %v)", singleChanges, f.single.total, f.single.kernel, f.single.controller)
	if err := checkWeight(h, changed.Services[vips/2], realServers/2); err != nil {
		return model.Desired{}, fmt.Errorf("after single change: %w", err)
	}
	return changed, nil
}

// median returns the middle of ds (sorted in place).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// addInTheMiddle is step 5: one real server added that sorts in the
// middle of one VIP. It returns the changed model.
func addInTheMiddle(ctx context.Context, r *report, d *director.Director, changed model.Desired, realServers int) (model.Desired, error) {
	added := again(changed)
	mid := model.RealServer{Addr: added.Services[0].RealServers[realServers/2].Addr.Prev(), Weight: 1}
	added.Services[0].RealServers = append(added.Services[0].RealServers, mid)
	res, err := d.Reconcile(ctx, added)
	if err != nil {
		return model.Desired{}, fmt.Errorf("add in the middle: %w", err)
	}
	r.info("one real server added to one VIP (kept in canonical order): %v, %d netlink writes", res.Duration, res.Writes)
	return added, nil
}

// again returns a copy of d given the way it was given (services and real
// servers in the same order, defaults not filled in), as the config file
// or Kubernetes source gives the model again on a change; the caller may
// change the copy.
func again(d model.Desired) model.Desired {
	out := d
	out.Services = slices.Clone(d.Services)
	for i := range out.Services {
		out.Services[i].RealServers = slices.Clone(out.Services[i].RealServers)
	}
	return out
}

// addAndRemoveService is step 6: one service (with realServers real
// servers) added to the model, then removed again; each must take only
// its own writes (created on lc, its real servers, the switch to mh; then
// one delete).
func addAndRemoveService(ctx context.Context, r *report, d *director.Director, h *ipvs.Handle, desired model.Desired, f *figures) error {
	added := again(desired)
	s := added.Services[0]
	s.VIP = netip.AddrFrom4([4]byte{198, 19, 255, 254})
	s.RealServers = slices.Clone(s.RealServers)
	added.Services = append(added.Services, s)
	res, err := d.Reconcile(ctx, added)
	if err != nil {
		return fmt.Errorf("add one service: %w", err)
	}
	f.addService = res
	r.info("one service added (%d real servers): %v (kernel %v, director %v), %d netlink writes, full listing: %v",
		len(s.RealServers), res.Duration, res.KernelTime, res.ControllerTime(), res.Writes, res.FullListing)
	if want := len(s.RealServers) + 2; res.Writes != want {
		return fmt.Errorf("adding one service made %d writes; want %d", res.Writes, want)
	}
	if err := checkWeight(h, s, 0); err != nil {
		return fmt.Errorf("after adding one service: %w", err)
	}
	res, err = d.Reconcile(ctx, desired)
	if err != nil {
		return fmt.Errorf("remove one service: %w", err)
	}
	f.delService = res
	r.info("one service removed: %v (kernel %v, director %v), %d netlink writes, full listing: %v",
		res.Duration, res.KernelTime, res.ControllerTime(), res.Writes, res.FullListing)
	if res.Writes != 1 {
		return fmt.Errorf("removing one service made %d writes; want 1", res.Writes)
	}
	if err := checkWeight(h, s, 0); err == nil {
		return fmt.Errorf("service %s still in the kernel after its removal", s.Key())
	}
	return nil
}
