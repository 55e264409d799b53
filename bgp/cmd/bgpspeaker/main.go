// Command bgpspeaker runs one bgp.Speaker from a YAML file and announces a
// fixed set of prefixes: a stand-alone announcer for labs and for running
// a director's BGP before it is wired into the tlb binary.
//
//	bgpspeaker --config bgp.yaml --announce 203.0.113.0/24 [--drain 5s] [--metrics 127.0.0.1:9102]
//
// On SIGTERM or SIGINT it withdraws every prefix, waits the drain period
// (routers move new flows away while existing ones still arrive), then
// closes its sessions and exits 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/tlb/obs"
)

func main() {
	cfgPath := flag.String("config", "", "YAML file with the bgp section's fields (required)")
	announce := flag.String("announce", "", "comma-separated prefixes to announce")
	drain := flag.Duration("drain", 0, "wait after withdrawing on SIGTERM, before closing sessions")
	metrics := flag.String("metrics", "", "host:port for /metrics, /healthz, /readyz (empty: off)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*cfgPath, *announce, *drain, *metrics, log); err != nil {
		log.Error("bgpspeaker failed", "err", err)
		os.Exit(1)
	}
}

func run(cfgPath, announce string, drain time.Duration, metricsAddr string, log *slog.Logger) error {
	if cfgPath == "" {
		return fmt.Errorf("--config is required")
	}
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return fmt.Errorf("read bgp config: %w", err)
	}
	cfg, err := bgp.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", cfgPath, err)
	}
	var prefixes []netip.Prefix
	for _, s := range strings.Split(announce, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return fmt.Errorf("--announce: %w", err)
		}
		prefixes = append(prefixes, p)
	}

	o := obs.NewServer(metricsAddr, log)
	sp, err := bgp.NewSpeaker(cfg, log, o.Registry)
	if err != nil {
		return err
	}
	if _, err := o.Start(nil); err != nil {
		return err
	}
	defer func() { _ = o.Shutdown(context.Background()) }()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := sp.Start(ctx); err != nil {
		return err
	}
	if err := sp.Announce(ctx, prefixes); err != nil {
		_ = sp.Stop(context.Background())
		return err
	}
	log.Info("announcing", "prefixes", prefixes)
	o.SetReady(true, "")
	<-ctx.Done()

	log.Info("withdrawing before exit", "drain", drain)
	o.SetReady(false, "shutting down")
	if err := sp.WithdrawAll(context.Background()); err != nil {
		log.Error("withdraw on shutdown", "err", err)
	}
	time.Sleep(drain)
	return sp.Stop(context.Background())
}
