//go:build ratelimit

package authz

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/integration/poll"
	"github.com/tlbproject/tlb/l7/ratelimit/rlsproc"
)

// rateLimitConfigAddr is where the rate limit service's l7 serves its
// configuration (--ratelimit-xds-listen).
const rateLimitConfigAddr = "127.0.22.30:22018"

// startRateLimitService runs the group's rate limit service as
// deploy/envoy/ratelimit.yaml does: an l7 serve with the gateways' DSL
// and --ratelimit-xds-listen, and one envoyproxy/ratelimit replica per
// address in addrs taking its limits from that l7 over xDS, all counting
// in the one Redis (with its password). It returns once every replica has
// loaded the limits.
func startRateLimitService(t *testing.T, redis *sessionRedis, dir string, addrs []string) {
	t.Helper()
	bin, err := rlsproc.Binary()
	if err != nil {
		t.Fatal(err)
	}
	l7, err := envoyproc.L7Binary()
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	logFile, err := os.Create(filepath.Join(run, "l7.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(l7, "serve", "--group=edge", "--config="+dir, "--xds-addr=unix://"+filepath.Join(run, "xds.sock"),
		"--metrics-addr=127.0.22.30:22480", "--ratelimit-address="+addrs[0], "--ratelimit-xds-listen="+rateLimitConfigAddr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("--- rate limit l7 log:\n%s", b)
		}
	})
	poll.Until(t, time.Minute, "the rate limit l7 serves its configuration", func() bool {
		c, err := net.DialTimeout("tcp", rateLimitConfigAddr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	for i, addr := range addrs {
		env := append(rlsproc.XDSEnv(rateLimitConfigAddr, "ratelimit-"+string(rune('0'+i))),
			"REDIS_AUTH="+redisPassword, "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL=200ms", "XDS_CLIENT_BACKOFF_MAX_INTERVAL=1s")
		svc, err := rlsproc.StartOn(context.Background(), bin, redis.addr, addr, env, time.Minute)
		if err != nil {
			t.Fatalf("rate limit service replica %d on %s: %v", i, addr, err)
		}
		t.Cleanup(func() {
			svc.Stop()
			if t.Failed() {
				t.Logf("--- rate limit service %s log:\n%s", addr, svc.Log())
			}
		})
	}
}
