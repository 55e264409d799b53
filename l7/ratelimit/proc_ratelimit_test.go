//go:build ratelimit

package ratelimit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/ratelimit/rlsproc"
)

// serviceBinary fails the test, rather than skipping it, when the binary
// is not given: these tests are the proof of the global limit.
func serviceBinary(t *testing.T) string {
	t.Helper()
	bin, err := rlsproc.Binary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// runtimeDir is the service's file configuration: RUNTIME_ROOT=root,
// RUNTIME_SUBDIRECTORY=current, one file per domain in current/config/.
type runtimeDir struct{ root string }

func newRuntimeDir(t *testing.T) runtimeDir {
	d := runtimeDir{root: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(d.root, "current", "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// env points the service at d: it watches RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/
// RUNTIME_APPDIRECTORY itself (RUNTIME_WATCH_ROOT=false) and skips hidden
// files and directories (RUNTIME_IGNOREDOTFILES, see swapLikeKubelet).
func (d runtimeDir) env() []string {
	return []string{
		"CONFIG_TYPE=FILE",
		"RUNTIME_ROOT=" + d.root, "RUNTIME_SUBDIRECTORY=current", "RUNTIME_APPDIRECTORY=config",
		"RUNTIME_WATCH_ROOT=false", "RUNTIME_IGNOREDOTFILES=true",
	}
}

// write puts cfg in place atomically (written aside, then renamed in), so
// the service never loads half a file.
func (d runtimeDir) write(t *testing.T, cfg ratelimit.ServiceConfig) {
	t.Helper()
	y, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(d.root, "."+cfg.FileName())
	if err := os.WriteFile(tmp, y, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(d.root, "current", "config", cfg.FileName())); err != nil {
		t.Fatal(err)
	}
}

// swapLikeKubelet replaces every file of the configuration directory the
// way the kubelet updates a mounted ConfigMap (its AtomicWriter): the files
// go into a new hidden directory ..<version>, a ..data symlink is switched
// to it by a rename, and each visible name is a symlink through ..data.
func (d runtimeDir) swapLikeKubelet(t *testing.T, version int, cfgs ...ratelimit.ServiceConfig) {
	t.Helper()
	dir := filepath.Join(d.root, "current", "config")
	ts := fmt.Sprintf("..2026_12_01_00_00_00.%d", version)
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range cfgs {
		y, err := cfg.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ts, cfg.FileName()), y, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	if err := os.Symlink(ts, filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range cfgs {
		link := filepath.Join(dir, cfg.FileName())
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", cfg.FileName()), link); err != nil {
			t.Fatal(err)
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}

// service is one running replica of the rate limit service.
type service struct {
	client rlsv3.RateLimitServiceClient
}

// startService runs a replica against redisAddr with its configuration
// from source (the environment that names it: runtimeDir.env or xdsEnv),
// and returns once it reports healthy, which, with
// HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED, means a configuration loaded.
func startService(t *testing.T, bin, redisAddr string, source []string) *service {
	t.Helper()
	p, err := rlsproc.Start(context.Background(), bin, redisAddr, source, 20*time.Second)
	if err != nil {
		t.Fatalf("starting the rate limit service: %v", err)
	}
	conn, err := grpc.NewClient(p.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		p.Stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		p.Stop()
		if t.Failed() {
			t.Logf("rate limit service log:\n%s", p.Log())
		}
	})
	return &service{client: rlsv3.NewRateLimitServiceClient(conn)}
}
