//go:build ratelimit

package ratelimit_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/ratelimit"
)

// binEnv names the envoyproxy/ratelimit binary the tests run.
const binEnv = "TLB_RATELIMIT_BIN"

// serviceBinary fails the test, rather than skipping it, when the binary
// is not given: these tests are the proof of the global limit.
func serviceBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(binEnv)
	if bin == "" {
		t.Fatalf("%s is not set: build the service with tools/ratelimit/build.sh and set %s to the path it prints (make ratelimit-test does both)", binEnv, binEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v", binEnv, bin, err)
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
	log    *syncBuffer
}

// startService runs a replica against redisAddr with its configuration
// from source (the environment that names it: runtimeDir.env or xdsEnv),
// and returns once it reports healthy, which, with
// HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED, means a configuration loaded.
func startService(t *testing.T, bin, redisAddr string, source []string) *service {
	t.Helper()
	var last error
	for range 3 { // a free port may be taken before the service binds it
		s, err := tryStart(t, bin, redisAddr, source)
		if err == nil {
			return s
		}
		last = err
	}
	t.Fatalf("starting the rate limit service: %v", last)
	return nil
}

func tryStart(t *testing.T, bin, redisAddr string, source []string) (*service, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	grpcPort, httpPort, debugPort := ports[0], ports[1], ports[2]
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append([]string{
		"HOST=127.0.0.1", "PORT=" + strconv.Itoa(httpPort),
		"GRPC_HOST=127.0.0.1", "GRPC_PORT=" + strconv.Itoa(grpcPort),
		"DEBUG_HOST=127.0.0.1", "DEBUG_PORT=" + strconv.Itoa(debugPort),
		"BACKEND_TYPE=redis", "REDIS_SOCKET_TYPE=tcp", "REDIS_URL=" + redisAddr,
		"USE_STATSD=false", "LOG_LEVEL=warn",
		"HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED=true",
	}, source...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() { cancel(); <-done }

	health := fmt.Sprintf("http://127.0.0.1:%d/healthcheck", httpPort)
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-done:
			cancel()
			return nil, fmt.Errorf("the service exited before it was healthy:\n%s", log.String())
		default:
		}
		if resp, err := http.Get(health); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the service was not healthy after 20s:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	conn, err := grpc.NewClient(net.JoinHostPort("127.0.0.1", strconv.Itoa(grpcPort)),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		stop()
		return nil, err
	}
	t.Cleanup(func() {
		_ = conn.Close()
		stop()
		if t.Failed() {
			t.Logf("rate limit service log:\n%s", log.String())
		}
	})
	return &service{client: rlsv3.NewRateLimitServiceClient(conn), log: log}, nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// syncBuffer collects a child's output from its copying goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
