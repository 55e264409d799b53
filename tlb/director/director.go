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
	// FullListAfter bounds how long reconciles plan from what the
	// director remembers programming, listing nothing (see cache.go): a
	// reconcile this long or longer after the last full listing lists
	// every service and its real servers again, which repairs what was
	// changed behind the director's back. 0 means DefaultFullListAfter;
	// negative makes every reconcile a full listing.
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
	mem     programmed
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
	// KernelTime is the part of Duration spent in calls to the kernel:
	// IPVS netlink requests (with the netlink library's encoding and
	// parsing of them) and sysctl reads and writes. The rest is the
	// director's own work (ControllerTime).
	KernelTime time.Duration
	// Rejected is true when the desired state was invalid and the kernel
	// was not looked at.
	Rejected bool
	// FullListing is true when every service and its real servers were
	// listed; false when the reconcile was planned from what the
	// director remembers programming, listing nothing (see cache.go).
	FullListing bool
	// StaleMemory is true when a plan from memory was refused by the
	// kernel (IPVS changed behind the director's back) and the same
	// reconcile listed everything and started again.
	StaleMemory bool

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

// ControllerTime is the part of Duration not spent in the kernel.
func (r Result) ControllerTime() time.Duration { return r.Duration - r.KernelTime }

// Reconcile makes the kernel hold desired: plan the difference, return
// early if there is none, apply. If desired is invalid nothing is written,
// the kernel keeps the last good state and the error names each bad field.
//
// Between full listings it lists nothing: it plans from what it
// remembers programming (see cache.go); a write the kernel refuses sends
// it to a full listing at once.
func (d *Director) Reconcile(ctx context.Context, desired model.Desired) (Result, error) {
	return d.run(ctx, desired, false)
}

// ReconcileFull is Reconcile with a full listing: every service and its
// real servers are listed from the kernel, so any drift is repaired.
func (d *Director) ReconcileFull(ctx context.Context, desired model.Desired) (Result, error) {
	return d.run(ctx, desired, true)
}

func (d *Director) run(ctx context.Context, desired model.Desired, full bool) (Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	start := d.now()
	var res Result
	var err error
	if full || !d.mem.fresh(start, d.maxAge) {
		res, err = d.reconcileListed(ctx, desired)
	} else {
		var stale bool
		res, stale, err = d.reconcileFromMemory(ctx, desired)
		if stale {
			d.log.Warn("IPVS differs from what the director programmed; listing everything", "err", err, "writes", res.Writes)
			d.mem.clear()
			first := res
			res, err = d.reconcileListed(ctx, desired)
			res.Writes += first.Writes
			res.SysctlWrites += first.SysctlWrites
			res.KernelTime += first.KernelTime
			res.StaleMemory = true
		}
	}
	res.Duration = d.now().Sub(start)
	d.metrics.observe(res, err)
	if err != nil {
		// The kernel may differ from what was planned: list everything
		// next time.
		d.mem.clear()
		d.log.Error("reconcile failed", "err", err, "writes", res.Writes)
	}
	return res, err
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
