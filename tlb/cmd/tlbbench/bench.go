package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

// bench measures the director against ipvsadm on vips x realServers
// destinations and writes the figures to out, ending with BENCH lines.
func bench(ctx context.Context, out io.Writer, log *slog.Logger, vips, realServers int, sched model.Scheduler, ipvsadmPath, cpuProfile string) error {
	r := &report{w: out}
	if vips < 1 || realServers < 2 {
		return fmt.Errorf("need at least 1 VIP and 2 real servers, got %d and %d", vips, realServers)
	}
	if err := director.CheckKernel(director.ProcSys{}); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "tlbbench")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	desired := benchModel(vips, realServers, sched)
	if err := desired.Validate(); err != nil {
		return err
	}
	total := vips * realServers
	first := desired.Sorted().Services[0]
	r.info("model: %d VIPs x %d real servers = %d destinations (scheduler %s, flags %v, tunnel)", vips, realServers, total, first.Scheduler, first.Flags)

	// Each side runs in a network namespace of its own, with an empty
	// IPVS table: the kernel keeps deleted real servers in a per-namespace
	// trash list for minutes and searches it on every add, so whoever
	// runs after a flush in the same namespace is slowed down.
	var f figures
	if f.restore, err = timeIPVSAdmRestore(r, tmp, ipvsadmPath, desired, total); err != nil {
		return err
	}
	ns, err := newDirectorNS()
	if err != nil {
		return err
	}
	defer ns.close()
	// The bench says when it wants a full listing (ReconcileFull); under
	// TCG the full sync alone can take longer than the default
	// FullListAfter, which would turn the steps meant to run from memory
	// into full listings.
	d, err := director.New(ns.h, director.NetnsProcSys{NsPath: ns.path}, log,
		director.Options{RuntimeDir: tmp, FullListAfter: time.Hour})
	if err != nil {
		return err
	}
	if f.full, err = fullSync(ctx, r, d, ns.h, desired, total); err != nil {
		return err
	}
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if err := noopResyncs(ctx, r, d, desired, &f); err != nil {
		return err
	}
	changed, err := drainOne(ctx, r, d, ns.h, desired, realServers, &f)
	if err != nil {
		return err
	}
	added, err := addInTheMiddle(ctx, r, d, changed, realServers)
	if err != nil {
		return err
	}
	if err := addAndRemoveService(ctx, r, d, ns.h, added, &f); err != nil {
		return err
	}
	// Step 7: a real server deleted behind the director's back.
	if err := driftRepair(ctx, r, d, ns.h, added); err != nil {
		return err
	}
	if f.rss, err = peakRSS(); err != nil {
		return err
	}
	r.info("director peak RSS (VmHWM) holding the model: %.1f MiB", f.rss)
	f.report(r)
	return nil
}

// figures are what bench reports as BENCH lines. Each single change is
// a director.Result: its wall time, and the parts spent in the kernel and
// in the director (ControllerTime).
type figures struct {
	restore, full, noopFull                  time.Duration
	noop, addService, delService             director.Result
	single                                   singleChange
	noopWrites, noopFullWrites, singleListed int
	rss                                      float64
}

// report adds the BENCH lines of the figures to r and prints them.
func (f figures) report(r *report) {
	r.add("l4_full_sync_ms", ms(f.full), "ms")
	r.add("l4_ipvsadm_restore_ms", ms(f.restore), "ms")
	r.add("l4_full_sync_ratio_vs_ipvsadm", f.full.Seconds()/f.restore.Seconds(), "x")
	r.add("l4_noop_resync_writes", float64(f.noopWrites), "count")
	r.add("l4_noop_resync_full_listing_writes", float64(f.noopFullWrites), "count")
	r.add("l4_noop_resync_full_listing_ms", ms(f.noopFull), "ms")
	r.add("l4_noop_resync_controller_ms", ms(f.noop.ControllerTime()), "ms")
	r.add("l4_single_change_ms", ms(f.single.total), "ms")
	r.add("l4_single_change_controller_ms", ms(f.single.controller), "ms")
	r.add("l4_single_change_kernel_ms", ms(f.single.kernel), "ms")
	r.add("l4_single_change_listed_services", float64(f.singleListed), "count")
	r.add("l4_single_service_add_ms", ms(f.addService.Duration), "ms")
	r.add("l4_single_service_add_controller_ms", ms(f.addService.ControllerTime()), "ms")
	r.add("l4_single_service_delete_ms", ms(f.delService.Duration), "ms")
	r.add("l4_single_service_delete_controller_ms", ms(f.delService.ControllerTime()), "ms")
	r.add("l4_director_rss_mib", f.rss, "MiB")
	r.flush()
}

// directorNS is the fresh network namespace the director works in, and
// its IPVS handle.
type directorNS struct {
	path string
	h    *ipvs.Handle
}

// directorNSName names the director's namespace.
const directorNSName = "tlbbench-director"

// newDirectorNS creates the director's namespace with lo up and opens
// its IPVS handle.
func newDirectorNS() (_ *directorNS, err error) {
	if out, err := exec.Command("ip", "netns", "add", directorNSName).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("create network namespace %s: %w: %s", directorNSName, err, out)
	}
	defer func() {
		if err != nil {
			_ = exec.Command("ip", "netns", "del", directorNSName).Run()
		}
	}()
	// Bring lo up: the kernel refuses (EINVAL) real servers whose address
	// type it cannot resolve, which needs the namespace's local table.
	if out, err := exec.Command("ip", "-n", directorNSName, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bring lo up in %s: %w: %s", directorNSName, err, out)
	}
	path := "/var/run/netns/" + directorNSName
	h, err := ipvs.New(path)
	if err != nil {
		return nil, fmt.Errorf("open IPVS netlink socket in %s: %w", path, err)
	}
	return &directorNS{path: path, h: h}, nil
}

// close closes the IPVS handle and deletes the namespace.
func (n *directorNS) close() {
	n.h.Close()
	_ = exec.Command("ip", "netns", "del", directorNSName).Run()
}

// fullSync is step 2: the director programs desired from empty; it
// returns how long that took.
func fullSync(ctx context.Context, r *report, d *director.Director, h *ipvs.Handle, desired model.Desired, total int) (time.Duration, error) {
	res, err := d.Reconcile(ctx, desired)
	if err != nil {
		return 0, fmt.Errorf("full sync: %w", err)
	}
	r.info("director full sync from empty: %v, %d netlink writes", res.Duration, res.Writes)
	if err := checkKernel(h, len(desired.Services), total); err != nil {
		return 0, fmt.Errorf("after full sync: %w", err)
	}
	return res.Duration, nil
}

// startCPUProfile starts writing a CPU profile to path; stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// noopResyncs is step 3: resyncs that change nothing, as between full
// listings (planned from what the director remembers, listing nothing),
// then with a full listing (every service and its real servers listed,
// as the periodic one does).
func noopResyncs(ctx context.Context, r *report, d *director.Director, desired model.Desired, f *figures) error {
	res, err := d.Reconcile(ctx, desired)
	if err != nil {
		return fmt.Errorf("no-op resync: %w", err)
	}
	f.noop, f.noopWrites = res, res.Writes
	r.info("no-op resync: %v (kernel %v, director %v), %d netlink writes, plan empty: %v, full listing: %v, services listed %d, cached %d",
		res.Duration, res.KernelTime, res.ControllerTime(), res.Writes, res.Plan.Empty(), res.FullListing, res.Plan.Listed, res.Plan.Cached)
	if res.FullListing {
		return fmt.Errorf("no-op resync was a full listing; want it planned from memory")
	}
	res, err = d.ReconcileFull(ctx, desired)
	if err != nil {
		return fmt.Errorf("no-op resync with full listing: %w", err)
	}
	f.noopFull, f.noopFullWrites = res.Duration, res.Writes
	r.info("no-op resync, full listing: %v, %d netlink writes, plan empty: %v, services listed %d",
		res.Duration, res.Writes, res.Plan.Empty(), res.Plan.Listed)
	if vips := len(desired.Services); res.Plan.Listed != vips {
		return fmt.Errorf("full listing listed %d services; want %d", res.Plan.Listed, vips)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// checkKernel verifies the kernel holds the expected numbers of services
// and destinations, so no figure is reported for work not done.
func checkKernel(h *ipvs.Handle, services, dests int) error {
	svcs, err := h.GetServices()
	if err != nil {
		return err
	}
	n := 0
	for _, s := range svcs {
		ds, err := h.GetDestinations(s)
		if err != nil {
			return err
		}
		n += len(ds)
	}
	if len(svcs) != services || n != dests {
		return fmt.Errorf("kernel holds %d services and %d real servers; want %d and %d", len(svcs), n, services, dests)
	}
	return nil
}

// checkWeight verifies that the kernel holds real server i of s (real
// servers in canonical order) with its desired weight.
func checkWeight(h *ipvs.Handle, s model.Service, i int) error {
	svcs, err := h.GetServices()
	if err != nil {
		return err
	}
	rs := s.RealServers[i]
	for _, ks := range svcs {
		if !net.IP(s.VIP.AsSlice()).Equal(ks.Address) || ks.Port != s.Port {
			continue
		}
		ds, err := h.GetDestinations(ks)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if net.IP(rs.Addr.AsSlice()).Equal(d.Address) {
				if d.Weight != rs.Weight {
					return fmt.Errorf("real server %s of %s has weight %d; want %d", rs.Addr, s.Key(), d.Weight, rs.Weight)
				}
				return nil
			}
		}
		return fmt.Errorf("real server %s of %s missing", rs.Addr, s.Key())
	}
	return fmt.Errorf("service %s missing", s.Key())
}

// peakRSS returns VmHWM from /proc/self/status in MiB.
func peakRSS() (float64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmHWM %q: %w", line, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
