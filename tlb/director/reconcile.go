package director

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tlbproject/tlb/tlb/model"
)

// reconcileListed lists every service the director cares about and its
// real servers, plans against that and applies; on success it remembers
// the result as what it programmed.
func (d *Director) reconcileListed(ctx context.Context, desired model.Desired) (Result, error) {
	if err := admit(ctx, desired.Validate()); err != nil {
		return Result{Rejected: true}, err
	}
	h, sys, kernelTime := d.metered()
	var res Result
	var errs []error
	sw, err := ensureSysctls(sys, d.want)
	res.SysctlWrites = sw
	if err != nil {
		errs = append(errs, err)
	}

	sorted := desired.Sorted()
	listedAt := d.now()
	actual, err := listActual(h, byKey(sorted), d.record.Owns)
	if err != nil {
		res.KernelTime = kernelTime()
		return res, errors.Join(append(errs, err)...)
	}
	plan := buildPlan(sorted, actual, d.record.Owns, d.record.Keys())
	res.Plan, res.planned, res.FullListing = plan, true, true
	res.Services, res.RealServers, res.VIPs = counts(sorted)
	applyErr, recordErr := d.apply(h, plan)
	res.Writes, res.KernelTime = h.writes, kernelTime()
	errs = append(errs, applyErr, recordErr, heldError(actual, plan.Held))
	if err := errors.Join(errs...); err != nil {
		return res, err // run forgets what was programmed
	}
	d.mem.rememberListed(desired, sorted, actual, plan, listedAt)
	return res, nil
}

// reconcileFromMemory plans desired against what the director remembers
// programming and applies the difference, listing nothing (see cache.go).
// stale reports that the kernel refused a write, so memory and kernel
// differ: the caller forgets the memory and lists.
func (d *Director) reconcileFromMemory(ctx context.Context, desired model.Desired) (res Result, stale bool, err error) {
	delta := d.mem.diff(desired)
	if err := admit(ctx, delta.validate(desired)); err != nil {
		return Result{Rejected: true}, false, err
	}
	h, sys, kernelTime := d.metered()
	sw, sysErr := ensureSysctls(sys, d.want)
	res.SysctlWrites = sw
	plan := d.mem.planFromMemory(delta)
	res.Plan, res.planned = plan, true
	applyErr, recordErr := d.apply(h, plan)
	res.Writes, res.KernelTime = h.writes, kernelTime()
	if applyErr != nil {
		return res, true, applyErr
	}
	d.mem.rememberChanges(desired, delta, plan)
	res.Services, res.RealServers, res.VIPs = d.mem.counts()
	return res, false, errors.Join(sysErr, recordErr)
}

// heldError names the services of the model another IPVS user holds
// (Plan.Held), with one of their real servers, and what to do; nil when
// there are none. The rest of the plan is applied; the error makes the
// next reconcile list again, so the service is taken as soon as the
// other user lets it go.
func heldError(actual actualState, held []model.Key) error {
	var errs []error
	for _, k := range held {
		a := actual.Services[k]
		var other actualDest
		for _, d := range a.Dests {
			if d.Fwd != tunnelFwd {
				other = d
				break
			}
		}
		errs = append(errs, fmt.Errorf("IPVS service %s is held by another IPVS user (scheduler %s, real server %s not forwarded by tunnel): "+
			"left as it is, not served by this director; kube-proxy in IPVS mode programs a load balancer IP whose ipMode is VIP "+
			"(the ipam writes Proxy): once nothing programs it, delete it (ipvsadm -D) and the director creates its own",
			k, a.Scheduler, other.Addr))
	}
	return errors.Join(errs...)
}

// admit returns the error that stops a reconcile before it looks at the
// kernel: desired invalid (invalid, from Validate) or ctx done.
func admit(ctx context.Context, invalid error) error {
	if invalid != nil {
		return fmt.Errorf("reject desired state, kernel left as it is: %w", invalid)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("reconcile IPVS: %w", err)
	}
	return nil
}

// metered returns the director's IPVS handle and sysctls (nil stays nil)
// wrapped to count writes and time the calls, and a function returning
// the time spent in both so far.
func (d *Director) metered() (*meteredIPVS, Sysctls, func() time.Duration) {
	h := &meteredIPVS{IPVS: d.ipvs, now: d.now}
	var sys Sysctls
	ms := &meteredSysctls{Sysctls: d.sys, now: d.now}
	if d.sys != nil {
		sys = ms
	}
	return h, sys, func() time.Duration { return h.spent + ms.spent }
}

// apply writes a non-empty plan through h, keeping the ownership record:
// the services about to be created are recorded before they are created,
// so a crash in between never leaves a service of ours unrecorded, and
// the deleted and forgotten ones are dropped after. It returns the
// kernel's errors and the record's apart.
func (d *Director) apply(h *meteredIPVS, plan Plan) (applyErr, recordErr error) {
	if plan.Empty() {
		return nil, nil
	}
	var recErrs []error
	intent := append(keysOf(plan.AddServices), plan.Adopt...)
	if err := d.record.Update(intent, nil); err != nil {
		recErrs = append(recErrs, err)
	}
	for _, k := range plan.Adopt {
		d.log.Info("adopted existing service in the model", "vip", k.String())
	}
	deleted, applyErr := applyPlan(h, plan, d.log)
	if err := d.record.Update(nil, append(deleted, plan.Forget...)); err != nil {
		recErrs = append(recErrs, err)
	}
	d.log.Info("reconciled IPVS", "writes", h.writes, "addServices", len(plan.AddServices),
		"updateServices", len(plan.UpdateServices), "deleteServices", len(plan.DeleteServices),
		"changedServices", len(plan.Destinations), "keptServices", plan.KeptServices, "foreign", plan.Foreign,
		"listedServices", plan.Listed, "cachedServices", plan.Cached)
	return applyErr, errors.Join(recErrs...)
}
