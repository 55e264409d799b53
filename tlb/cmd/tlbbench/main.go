// Command tlbbench measures the director on a real kernel (run it as root
// inside the lab VM, see tools/bench-l4.sh): it programs N VIPs x M real
// servers from empty, times `ipvsadm --restore` of the same rule set, then
// no-op resyncs (from what the director remembers, and with a full
// listing), single changes (a real server drained, one added, a service
// added and removed), each with the kernel's time and the director's
// apart, and prints the director's peak RSS. It ends with
// `BENCH <name> <value> <unit>` lines.
//
// It flushes every IPVS service in its network namespace: run it only in
// a namespace (or VM) of its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/tlbproject/tlb/tlb/model"
)

func main() {
	vips := flag.Int("vips", 1000, "number of VIPs (one TCP service each)")
	realServers := flag.Int("real-servers", 32, "real servers per VIP")
	ipvsadmPath := flag.String("ipvsadm", "ipvsadm", "ipvsadm binary for the comparison")
	sched := flag.String("scheduler", "mh", "IPVS scheduler of every service")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the resync phases (no-op, single change) to this file")
	verbose := flag.Bool("v", false, "log every director change")
	flag.Parse()
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if err := bench(context.Background(), os.Stdout, log, *vips, *realServers, model.Scheduler(*sched), *ipvsadmPath, *cpuProfile); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "tlbbench:", err)
		os.Exit(1)
	}
}

// report prints an informational line and a BENCH line list at the end.
type report struct {
	w     io.Writer
	bench []string
}

func (r *report) info(format string, args ...any) { _, _ = fmt.Fprintf(r.w, format+"\n", args...) }

func (r *report) add(name string, value float64, unit string) {
	r.bench = append(r.bench, fmt.Sprintf("BENCH %s %.3f %s", name, value, unit))
}

func (r *report) flush() {
	for _, b := range r.bench {
		_, _ = fmt.Fprintln(r.w, b)
	}
}
