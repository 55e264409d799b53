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
	"github.com/tlbproject/tlb/internal/poll"
	"github.com/tlbproject/tlb/l7/ratelimit/rlsproc"
)

// startRateLimitService runs the group's rate limit service as
// deploy/envoy/ratelimit.yaml does: an l7 serve --keyless with the
// gateways' DSL serving the limits on a unix socket
// (--ratelimit-xds-listen), and one envoyproxy/ratelimit replica per
// address in addrs taking them from that socket over xDS, all counting in
// deploy/envoy/redis.yaml's Redis as its ACL user tlb-ratelimit (keys
// ratelimit:*, INCRBY and EXPIRE only). It returns once every replica has
// loaded the limits.
func startRateLimitService(t *testing.T, dir string, addrs []string) {
	t.Helper()
	bin, err := rlsproc.Binary()
	if err != nil {
		t.Fatal(err)
	}
	l7, err := envoyproc.L7Binary()
	if err != nil {
		t.Fatal(err)
	}
	redis := envoyproc.StartRedisT(t, "127.0.22.30")
	run, err := os.MkdirTemp("", "rl") // short: the socket's path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(run) })
	sock := filepath.Join(run, "ratelimit-xds.sock")
	logFile, err := os.Create(filepath.Join(run, "l7.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(l7, "serve", "--group=edge", "--config="+dir, "--keyless",
		"--metrics-addr=127.0.22.30:22480", "--ratelimit-address="+addrs[0], "--ratelimit-xds-listen=unix://"+sock)
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
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	for i, addr := range addrs {
		env := append(rlsproc.XDSEnv("unix://"+sock, "ratelimit-"+string(rune('0'+i))),
			"REDIS_AUTH=tlb-ratelimit:"+redis.Passwords["tlb-ratelimit"], "CACHE_KEY_PREFIX=ratelimit:",
			"XDS_CLIENT_BACKOFF_INITIAL_INTERVAL=200ms", "XDS_CLIENT_BACKOFF_MAX_INTERVAL=1s")
		svc, err := rlsproc.StartOn(context.Background(), bin, redis.Addr, addr, env, time.Minute)
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
