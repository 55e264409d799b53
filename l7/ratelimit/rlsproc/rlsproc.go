// Package rlsproc runs a private envoyproxy/ratelimit service for tests:
// on free loopback ports, counting in a given Redis, with its
// configuration from the environment the caller names (a runtime
// directory, or an xDS server). It owns that child process only. The
// binary comes from tools/ratelimit/build.sh (make ratelimit-test sets
// BinEnv to it).
package rlsproc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// BinEnv names the environment variable holding the service binary.
const BinEnv = "TLB_RATELIMIT_BIN"

// Binary returns the service binary named by BinEnv, or an error saying
// how to build it.
func Binary() (string, error) {
	bin := os.Getenv(BinEnv)
	if bin == "" {
		return "", fmt.Errorf("%s is not set: build the service with tools/ratelimit/build.sh and set %s to the path it prints (make ratelimit-test does both)", BinEnv, BinEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s=%s: %w", BinEnv, bin, err)
	}
	return bin, nil
}

// XDSEnv points the service at an xDS server (SotW) for its
// configuration, presenting node.
func XDSEnv(addr, node string) []string {
	return []string{"CONFIG_TYPE=GRPC_XDS_SOTW", "CONFIG_GRPC_XDS_SERVER_URL=" + addr, "CONFIG_GRPC_XDS_NODE_ID=" + node}
}

// Service is a running rate limit service.
type Service struct {
	// GRPCAddr is the loopback host:port of its RateLimitService.
	GRPCAddr string
	log      *buffer
	stop     func()
}

// Start runs bin against the Redis at redisAddr (no password; source may
// add REDIS_AUTH) with source (XDSEnv or a runtime directory's
// environment) and returns once it reports healthy, which, with
// HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED, means a configuration loaded;
// or fails within timeout.
func Start(ctx context.Context, bin, redisAddr string, source []string, timeout time.Duration) (*Service, error) {
	var last error
	for range 3 { // a free port may be taken before the service binds it
		s, err := start(ctx, bin, redisAddr, "", source, timeout)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

// StartOn is Start with the service's gRPC listener on grpcAddr
// (loopback host:port), for a caller that names it before the service
// runs: gateways started with --ratelimit-address.
func StartOn(ctx context.Context, bin, redisAddr, grpcAddr string, source []string, timeout time.Duration) (*Service, error) {
	return start(ctx, bin, redisAddr, grpcAddr, source, timeout)
}

func start(ctx context.Context, bin, redisAddr, grpcAddr string, source []string, timeout time.Duration) (*Service, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	grpcHost, grpcPort := "127.0.0.1", strconv.Itoa(ports[0])
	if grpcAddr != "" {
		if grpcHost, grpcPort, err = net.SplitHostPort(grpcAddr); err != nil {
			return nil, fmt.Errorf("gRPC address %q: %w", grpcAddr, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append([]string{
		"HOST=127.0.0.1", "PORT=" + strconv.Itoa(ports[1]),
		"GRPC_HOST=" + grpcHost, "GRPC_PORT=" + grpcPort,
		"DEBUG_HOST=127.0.0.1", "DEBUG_PORT=" + strconv.Itoa(ports[2]),
		"BACKEND_TYPE=redis", "REDIS_SOCKET_TYPE=tcp", "REDIS_URL=" + redisAddr,
		"USE_STATSD=false", "LOG_LEVEL=warn",
		"HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED=true",
	}, source...)
	log := &buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() { cancel(); <-done }

	health := fmt.Sprintf("http://127.0.0.1:%d/healthcheck", ports[1])
	deadline := time.Now().Add(timeout)
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
			return nil, fmt.Errorf("the service was not healthy after %s:\n%s", timeout, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &Service{GRPCAddr: net.JoinHostPort(grpcHost, grpcPort), log: log, stop: stop}, nil
}

// Stop terminates the service and waits for it.
func (s *Service) Stop() { s.stop() }

// Log returns what the service printed.
func (s *Service) Log() string { return s.log.String() }

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

// buffer collects a child's output from its copying goroutines.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
