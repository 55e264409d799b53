package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

// TestRateLimitFlags: --ratelimit-address must be HOST:PORT, and the
// configuration's xDS server listens on a unix socket only (issue 22: main
// took a loopback TCP port, open to every process of the node).
func TestRateLimitFlags(t *testing.T) {
	opts, err := rateLimitOptions(model.Options{}, "ratelimit.tlb-system.svc:8081")
	if err != nil || opts.RateLimitService == nil || opts.RateLimitService.Port != 8081 {
		t.Fatalf("rateLimitOptions = %+v, %v", opts, err)
	}
	if opts, err := rateLimitOptions(model.Options{}, ""); err != nil || opts.RateLimitService != nil {
		t.Fatalf("no address = %+v, %v", opts, err)
	}
	if _, err := rateLimitOptions(model.Options{}, "ratelimit"); err == nil {
		t.Error("an address without a port is accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:18000", "10.0.0.1:18000", "ratelimit:18000", "18000", "127.0.0.1:18000", "localhost:18000", "unix://rel.sock"} {
		if _, _, err := startRateLimitConfigs(ctx, log, addr, "edge"); err == nil {
			t.Errorf("--ratelimit-xds-listen %s is accepted", addr)
		}
	}
	_, done, err := startRateLimitConfigs(ctx, log, "unix://"+filepath.Join(t.TempDir(), "rl.sock"), "edge")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
}
