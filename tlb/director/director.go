package director

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tlbproject/tlb/tlb/model"
)

// Options are the optional parts of a Director.
type Options struct {
	// RuntimeDir holds the ownership record (RecordFile). Empty keeps the
	// record in memory only. Two directors must not share one.
	RuntimeDir string
	// Metrics, when set, is updated after every Reconcile.
	Metrics *Metrics
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Sysctls are the parameters to keep set; nil means
	// DirectorSysctls. Ignored when the Sysctls handle is nil.
	Sysctls []Sysctl
	// FullListAfter bounds how long reconciles rely on remembered
	// real-server lists (see cache.go): a reconcile this long or longer
	// after the last full listing lists every service's real servers
	// again, which repairs real servers changed behind the director's
	// back. 0 means DefaultFullListAfter; negative makes every reconcile
	// a full listing.
	FullListAfter time.Duration
}

// Director reconciles kernel IPVS with a desired model. It is safe for
// concurrent use; reconciles are serialised.
type Director struct {
	mu      sync.Mutex
	ipvs    IPVS
	sys     Sysctls
	want    []Sysctl
	log     *slog.Logger
	record  *Record
	metrics *Metrics
	now     func() time.Time
	maxAge  time.Duration // Options.FullListAfter, default applied
	cache   destCache
}

// Result describes one Reconcile.
type Result struct {
	// Plan is what was (or, on error, was to be) applied.
	Plan Plan
	// Writes counts IPVS netlink writes made; 0 on a no-op resync.
	Writes int
	// SysctlWrites counts sysctl files written.
	SysctlWrites int
	// Services and RealServers count what the director holds in the
	// kernel after the reconcile (its own services and their real
	// servers); VIPs counts their distinct addresses.
	Services, RealServers, VIPs int
	// Duration is the reconcile's wall time.
	Duration time.Duration
	// Rejected is true when the desired state was invalid and the kernel
	// was not looked at.
	Rejected bool
	// FullListing is true when every service's real servers were listed
	// (none taken from the remembered state).
	FullListing bool

	planned bool // the kernel was listed and a plan built
}

// New returns a Director writing through h. sys sets the IPVS sysctls (nil:
// leave them alone). It opens the ownership record in opts.RuntimeDir with
// OpenRecord: an unreadable record is moved aside, logged and counted, and
// the director starts with an empty one rather than failing.
func New(h IPVS, sys Sysctls, log *slog.Logger, opts Options) (*Director, error) {
	if h == nil {
		return nil, errors.New("new director: nil IPVS handle")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	rec, recovery, err := OpenRecord(opts.RuntimeDir, now)
	if err != nil {
		return nil, fmt.Errorf("new director: %w", err)
	}
	reportRecovery(log, opts.Metrics, opts.RuntimeDir, recovery)
	want := opts.Sysctls
	if want == nil {
		want = DirectorSysctls
	}
	maxAge := opts.FullListAfter
	if maxAge == 0 {
		maxAge = DefaultFullListAfter
	}
	return &Director{ipvs: h, sys: sys, want: want, log: log, record: rec, metrics: opts.Metrics, now: now, maxAge: maxAge}, nil
}

func reportRecovery(log *slog.Logger, m *Metrics, dir string, r RecordRecovery) {
	if r.ModeFixed {
		log.Warn("runtime directory mode changed", "dir", dir, "mode", RecordDirMode.String())
	}
	for _, p := range r.StaleTemps {
		log.Info("removed ownership record left by an interrupted write", "file", p)
	}
	if r.CorruptErr != nil {
		log.Error("ownership record unreadable, moved aside; starting with an empty record (only services in the model are adopted)",
			"err", r.CorruptErr, "movedTo", r.MovedTo)
		m.countCorruptRecord()
	}
}

// Owned returns the keys of the services the director has recorded as its
// own, sorted.
func (d *Director) Owned() []model.Key {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.record.Keys()
}

// Reconcile makes the kernel hold desired: list actual, plan, return early
// if the plan is empty, apply. If desired is invalid nothing is written,
// the kernel keeps the last good state and the error names each bad field.
//
// It lists every service but, between full listings, takes the real
// servers of a service unchanged in the model and in the kernel from the
// state it remembers from the last successful reconcile (see cache.go).
func (d *Director) Reconcile(ctx context.Context, desired model.Desired) (Result, error) {
	return d.run(ctx, desired, false)
}

// ReconcileFull is Reconcile with a full listing: every service's real
// servers are listed from the kernel, so any drift in them is repaired.
func (d *Director) ReconcileFull(ctx context.Context, desired model.Desired) (Result, error) {
	return d.run(ctx, desired, true)
}

func (d *Director) run(ctx context.Context, desired model.Desired, full bool) (Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	start := d.now()
	res, err := d.reconcile(ctx, desired, full || !d.cache.fresh(start, d.maxAge))
	res.Duration = d.now().Sub(start)
	d.metrics.observe(res, err)
	if err != nil {
		// The kernel may differ from what was planned: list everything
		// next time.
		d.cache.clear()
		d.log.Error("reconcile failed", "err", err, "writes", res.Writes)
	}
	return res, err
}

func (d *Director) reconcile(ctx context.Context, desired model.Desired, full bool) (Result, error) {
	if err := desired.Validate(); err != nil {
		return Result{Rejected: true}, fmt.Errorf("reject desired state, kernel left as it is: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return Result{Rejected: true}, fmt.Errorf("reconcile IPVS: %w", err)
	}
	sorted := desired.Sorted()
	var errs []error
	var res Result

	sw, err := ensureSysctls(d.sys, d.want)
	res.SysctlWrites = sw
	if err != nil {
		errs = append(errs, err)
	}

	wanted := byKey(sorted)
	var reuse func(actualService) bool
	if !full {
		reuse = d.cache.reuse(wanted)
	}
	listedAt := d.now()
	actual, err := listActual(d.ipvs, wanted, d.record.Owns, reuse)
	if err != nil {
		return res, errors.Join(append(errs, err)...)
	}
	res.FullListing = full
	plan := buildPlan(sorted, actual, d.record.Owns, d.record.Keys())
	res.Plan = plan
	res.planned = true
	res.Services, res.RealServers, res.VIPs = counts(sorted)
	if plan.Empty() {
		d.cache.store(wanted, full, listedAt)
		return res, errors.Join(errs...)
	}

	// Record what will be created before creating it, so a crash in
	// between never leaves a service of ours unrecorded.
	intent := append(keysOf(plan.AddServices), plan.Adopt...)
	if err := d.record.Update(intent, nil); err != nil {
		errs = append(errs, err)
	}
	for _, k := range plan.Adopt {
		d.log.Info("adopted existing service in the model", "vip", k.String())
	}
	counting := &countingIPVS{IPVS: d.ipvs}
	deleted, applyErr := applyPlan(counting, plan, d.log)
	res.Writes = counting.writes
	if applyErr != nil {
		errs = append(errs, applyErr)
	}
	if err := d.record.Update(nil, append(deleted, plan.Forget...)); err != nil {
		errs = append(errs, err)
	}
	d.cache.store(wanted, full, listedAt) // cleared by run on any error
	d.log.Info("reconciled IPVS", "writes", res.Writes, "addServices", len(plan.AddServices),
		"updateServices", len(plan.UpdateServices), "deleteServices", len(plan.DeleteServices),
		"changedServices", len(plan.Destinations), "keptServices", plan.KeptServices, "foreign", plan.Foreign,
		"listedServices", plan.Listed, "cachedServices", plan.Cached, "fullListing", full)
	return res, errors.Join(errs...)
}

func keysOf(svcs []model.Service) []model.Key {
	out := make([]model.Key, 0, len(svcs))
	for _, s := range svcs {
		out = append(out, s.Key())
	}
	return out
}

func counts(d model.Desired) (services, realServers, vips int) {
	seen := map[string]bool{}
	for _, s := range d.Services {
		services++
		realServers += len(s.RealServers)
		seen[s.VIP.String()] = true
	}
	return services, realServers, len(seen)
}
