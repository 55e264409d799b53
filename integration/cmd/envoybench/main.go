// Command envoybench measures the real Envoy gateway (make bench-envoy):
// throughput without filters, with JWT and with the session and CSRF
// interceptors, xDS ACK times with 10,000 services, route propagation
// with 3,000 routes and errors during route churn. It only wires flags;
// the logic is in integration/envoybench.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tlbproject/tlb/integration/envoybench"
)

func main() {
	dir, err := os.MkdirTemp("", "eb")
	if err != nil {
		fmt.Fprintln(os.Stderr, "envoybench:", err)
		os.Exit(1)
	}
	o := envoybench.Full(dir)
	o.Progress = os.Stderr
	flag.IntVar(&o.Connections, "connections", o.Connections, "wrk connections (seed 001: 300)")
	flag.IntVar(&o.Threads, "threads", o.Threads, "wrk threads")
	flag.DurationVar(&o.Duration, "duration", o.Duration, "measured time of each throughput load")
	flag.DurationVar(&o.Warmup, "warmup", o.Warmup, "unmeasured wrk run before each throughput load")
	flag.IntVar(&o.Rounds, "rounds", o.Rounds, "throughput rounds (each load once per round)")
	flag.IntVar(&o.XDSServices, "xds-services", o.XDSServices, "services served during the xDS ACK run")
	flag.IntVar(&o.XDSChanges, "xds-changes", o.XDSChanges, "endpoint changes timed")
	flag.IntVar(&o.PropagationRoutes, "routes", o.PropagationRoutes, "routes served during the propagation and churn runs")
	flag.IntVar(&o.PropagationSamples, "samples", o.PropagationSamples, "new routes timed")
	flag.DurationVar(&o.ChurnDuration, "churn", o.ChurnDuration, "time routes are added and removed under load")
	only := flag.String("only", "", "comma-separated measurements to run: throughput, xds, propagation (with churn); default all")
	keep := flag.Bool("keep", false, "keep the run's directory (logs of l7 and Envoy)")
	netFirst := flag.String("net", o.Net.String(), "first of the 16 loopback addresses the run uses (another run on the machine needs another range)")
	flag.IntVar(&o.Port, "port", o.Port, "first of the 100 ports the run uses")
	flag.Parse()
	if o.Net, err = netip.ParseAddr(*netFirst); err != nil {
		fmt.Fprintln(os.Stderr, "envoybench: -net:", err)
		os.Exit(2)
	}
	if *only != "" {
		o.Only = strings.Split(*only, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	f, err := envoybench.Run(ctx, o)
	stop()
	if err == nil {
		envoybench.Report(os.Stdout, o, f)
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "envoybench: logs kept in", dir)
	} else {
		_ = os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "envoybench:", err)
		os.Exit(1)
	}
}
