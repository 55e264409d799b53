package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

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

	// 1. ipvsadm --restore of the rules, in the VM's initial namespace.
	root, err := ipvs.New("")
	if err != nil {
		return fmt.Errorf("open IPVS netlink socket: %w", err)
	}
	defer root.Close()
	if err := root.Flush(); err != nil {
		return fmt.Errorf("flush IPVS: %w", err)
	}
	defer func() { _ = root.Flush() }()
	rules := filepath.Join(tmp, "rules")
	if err := writeRestoreFile(rules, desired); err != nil {
		return err
	}
	restore, err := timeRestore(ipvsadmPath, rules)
	if err != nil {
		return err
	}
	r.info("ipvsadm --restore from empty: %v", restore)
	if err := checkKernel(root, vips, total); err != nil {
		return fmt.Errorf("after ipvsadm restore: %w", err)
	}
	if err := root.Flush(); err != nil {
		return fmt.Errorf("flush IPVS: %w", err)
	}

	// 2. The director, from empty, in a fresh namespace.
	const ns = "tlbbench-director"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return fmt.Errorf("create network namespace %s: %w: %s", ns, err, out)
	}
	defer func() { _ = exec.Command("ip", "netns", "del", ns).Run() }()
	// Bring lo up: the kernel refuses (EINVAL) real servers whose address
	// type it cannot resolve, which needs the namespace's local table.
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("bring lo up in %s: %w: %s", ns, err, out)
	}
	nsPath := "/var/run/netns/" + ns
	h, err := ipvs.New(nsPath)
	if err != nil {
		return fmt.Errorf("open IPVS netlink socket in %s: %w", nsPath, err)
	}
	defer h.Close()
	d, err := director.New(h, director.NetnsProcSys{NsPath: nsPath}, log, director.Options{RuntimeDir: tmp})
	if err != nil {
		return err
	}
	res, err := d.Reconcile(ctx, desired)
	if err != nil {
		return fmt.Errorf("full sync: %w", err)
	}
	full := res.Duration
	r.info("director full sync from empty: %v, %d netlink writes", full, res.Writes)
	if err := checkKernel(h, vips, total); err != nil {
		return fmt.Errorf("after full sync: %w", err)
	}

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	// 3. No-op resyncs: as between full listings (real servers taken
	// from what the director remembers), then with a full listing (every
	// service's real servers listed, as the periodic one does).
	res, err = d.Reconcile(ctx, desired)
	if err != nil {
		return fmt.Errorf("no-op resync: %w", err)
	}
	noopWrites := res.Writes
	r.info("no-op resync: %v, %d netlink writes, plan empty: %v, full listing: %v, services listed %d, cached %d",
		res.Duration, res.Writes, res.Plan.Empty(), res.FullListing, res.Plan.Listed, res.Plan.Cached)
	res, err = d.ReconcileFull(ctx, desired)
	if err != nil {
		return fmt.Errorf("no-op resync with full listing: %w", err)
	}
	noopFull, noopFullWrites := res.Duration, res.Writes
	r.info("no-op resync, full listing: %v, %d netlink writes, plan empty: %v, services listed %d",
		res.Duration, res.Writes, res.Plan.Empty(), res.Plan.Listed)
	if res.Plan.Listed != vips {
		return fmt.Errorf("full listing listed %d services; want %d", res.Plan.Listed, vips)
	}

	// 4. One real server drained (weight 1 -> 0) in one VIP.
	changed := desired.Sorted()
	changed.Services[vips/2].RealServers[realServers/2].Weight = 0
	res, err = d.Reconcile(ctx, changed)
	if err != nil {
		return fmt.Errorf("single change: %w", err)
	}
	single, singleListed := res.Duration, res.Plan.Listed
	r.info("single real-server change (drain one): %v, %d netlink writes, full listing: %v, services listed %d, cached %d",
		single, res.Writes, res.FullListing, res.Plan.Listed, res.Plan.Cached)
	if res.Writes != 1 {
		return fmt.Errorf("single change made %d writes; want 1", res.Writes)
	}
	if err := checkWeight(h, changed.Services[vips/2], realServers/2); err != nil {
		return fmt.Errorf("after single change: %w", err)
	}

	// 5. One real server added that sorts in the middle of one VIP.
	added := changed.Sorted()
	mid := model.RealServer{Addr: added.Services[0].RealServers[realServers/2].Addr.Prev(), Weight: 1}
	added.Services[0].RealServers = append(added.Services[0].RealServers, mid)
	res, err = d.Reconcile(ctx, added)
	if err != nil {
		return fmt.Errorf("add in the middle: %w", err)
	}
	r.info("one real server added to one VIP (kept in canonical order): %v, %d netlink writes", res.Duration, res.Writes)

	// 6. A real server deleted behind the director's back.
	if err := driftRepair(ctx, r, d, h, added); err != nil {
		return err
	}

	rss, err := peakRSS()
	if err != nil {
		return err
	}
	r.info("director peak RSS (VmHWM) holding the model: %.1f MiB", rss)
	r.add("l4_full_sync_ms", ms(full), "ms")
	r.add("l4_ipvsadm_restore_ms", ms(restore), "ms")
	r.add("l4_full_sync_ratio_vs_ipvsadm", full.Seconds()/restore.Seconds(), "x")
	r.add("l4_noop_resync_writes", float64(noopWrites), "count")
	r.add("l4_noop_resync_full_listing_writes", float64(noopFullWrites), "count")
	r.add("l4_noop_resync_full_listing_ms", ms(noopFull), "ms")
	r.add("l4_single_change_ms", ms(single), "ms")
	r.add("l4_single_change_listed_services", float64(singleListed), "count")
	r.add("l4_director_rss_mib", rss, "MiB")
	r.flush()
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func writeRestoreFile(path string, d model.Desired) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := writeRestore(bw, d); err != nil {
		_ = f.Close()
		return fmt.Errorf("write restore file: %w", err)
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write restore file: %w", err)
	}
	return f.Close()
}

func timeRestore(ipvsadmPath, rules string) (time.Duration, error) {
	in, err := os.Open(rules)
	if err != nil {
		return 0, err
	}
	defer func() { _ = in.Close() }()
	cmd := exec.Command(ipvsadmPath, "--restore")
	cmd.Stdin = in
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("ipvsadm --restore: %w: %s", err, stderr.String())
	}
	return elapsed, nil
}

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
