// Command authzbench measures the L7 authorization service (make
// bench-authz): Redis with the sessions, the service and an external gRPC
// interceptor in a child process (it re-runs itself with -child), 64
// Check calls in flight from this one. It only wires flags; the logic is
// in l7/authzbench.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/tlbproject/tlb/l7/authzbench"
)

func main() {
	var o authzbench.Options
	child := flag.Bool("child", false, "run as the service child (internal)")
	flag.IntVar(&o.Streams, "streams", 64, "Check calls in flight")
	flag.IntVar(&o.Conns, "conns", 2, "client connections carrying them")
	flag.IntVar(&o.Sessions, "sessions", 10000, "sessions in Redis")
	flag.DurationVar(&o.Warmup, "warmup", 2*time.Second, "unmeasured warmup per run")
	flag.DurationVar(&o.Duration, "duration", 10*time.Second, "measured time per run")
	cpuprofile := flag.String("server-cpuprofile", "", "write the service child's CPU profile to this file")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *child {
		if *cpuprofile != "" {
			if pf, err := os.Create(*cpuprofile); err == nil && pprof.StartCPUProfile(pf) == nil {
				defer pprof.StopCPUProfile()
			}
		}
		dir, err := os.MkdirTemp("", "authzbench-")
		if err == nil {
			err = authzbench.Child(ctx, dir, o.Sessions, os.Stdin, os.Stdout, log)
			_ = os.RemoveAll(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "authzbench child:", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "authzbench:", err)
		os.Exit(1)
	}
	f, err := authzbench.Measure(ctx, self, []string{"-child", "-sessions", strconv.Itoa(o.Sessions), "-server-cpuprofile", *cpuprofile}, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "authzbench:", err)
		os.Exit(1)
	}
	authzbench.Report(os.Stdout, o, f)
}
