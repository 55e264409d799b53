package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tlbproject/tlb/l7/drain"
)

// runDrain drains the Envoy beside it once and returns: the gateway pod's
// preStop hook. Kubernetes runs it before it sends SIGTERM, so Envoy can
// be the container's own process (it keeps the capability its binary
// carries; a wrapper process between the runtime and Envoy would lose it,
// as a non-root process gets no ambient capabilities from Kubernetes).
func runDrain(args []string) error {
	fs := flag.NewFlagSet("drain", flag.ExitOnError)
	drainer := drainerFlags(fs)
	_ = fs.Parse(args)
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	d, err := drainer(log)
	if err != nil {
		return err
	}
	res, err := d.Drain(context.Background())
	if err != nil {
		return err
	}
	log.Info("envoy drained", "active", res.Active, "timedOut", res.TimedOut, "took", res.Took)
	return nil
}

// drainerFlags declares the flags of a drain ("l7 drain", "l7 envoy") on
// fs; the function it returns makes the Drainer once fs is parsed.
func drainerFlags(fs *flag.FlagSet) func(*slog.Logger) (*drain.Drainer, error) {
	admin := fs.String("admin", "unix:///run/tlb/envoy-admin.sock", "Envoy admin API: unix:///PATH or a loopback http:// URL")
	deadline := fs.Duration("drain-deadline", 60*time.Second, "longest the whole drain may take, --l4-wait included")
	l4Wait := fs.Duration("l4-wait", 10*time.Second, "how long the L4 tier takes to see /ready fail and stop sending new connections "+
		"(the directors' health fall x interval plus a timeout, with a margin); they are served meanwhile, then the listeners drain")
	quiet := fs.Duration("quiet", 3*time.Second, "the drain ends once no client connection is open and none has come for this long")
	poll := fs.Duration("poll", time.Second, "how often to read the connection counts")
	return func(log *slog.Logger) (*drain.Drainer, error) {
		if *l4Wait < 0 || *l4Wait >= *deadline {
			return nil, fmt.Errorf("--l4-wait %v must be at least 0 and below --drain-deadline %v", *l4Wait, *deadline)
		}
		if *quiet < 0 || *poll <= 0 {
			return nil, fmt.Errorf("--quiet %v must be at least 0 and --poll %v above 0", *quiet, *poll)
		}
		base, client := adminClient(*admin)
		return &drain.Drainer{Admin: base, Client: client, Log: log, Poll: *poll, L4Wait: *l4Wait, Quiet: *quiet, Deadline: *deadline, Now: time.Now}, nil
	}
}
