package main

import (
	"context"
	"flag"
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
	admin := fs.String("admin", "unix:///run/tlb/envoy-admin.sock", "Envoy admin API: unix:///PATH or a loopback http:// URL")
	deadline := fs.Duration("drain-deadline", 60*time.Second, "longest wait for connections to close")
	poll := fs.Duration("poll", time.Second, "how often to read the connection count")
	_ = fs.Parse(args)
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	base, client := adminClient(*admin)
	d := &drain.Drainer{Admin: base, Client: client, Log: log, Poll: *poll, Deadline: *deadline, Now: time.Now}
	res, err := d.Drain(context.Background())
	if err != nil {
		return err
	}
	log.Info("envoy drained", "active", res.Active, "timedOut", res.TimedOut, "took", res.Took)
	return nil
}
