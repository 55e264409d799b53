// Package redisproc runs a private redis-server for tests and benchmarks:
// on a free loopback port, in a temporary directory, with persistence off
// (--save "" --appendonly no). It owns that child process only. When
// redis-server is not installed, Start fails and says how to install it.
package redisproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Install says how to get redis-server on Debian.
const Install = "redis-server is not installed: run `apt-get install -y redis-server` (or `make deps`)"

// Redis is a running redis-server child.
type Redis struct {
	// Addr is its loopback host:port.
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts redis-server in dir and returns once it accepts
// connections (it says so on stdout), or fails within timeout.
func Start(ctx context.Context, dir string, timeout time.Duration) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New(Install)
	}
	var last error
	for range 3 { // the free port may be taken before redis binds it
		r, err := start(ctx, bin, dir, timeout)
		if err == nil {
			return r, nil
		}
		last = err
	}
	return nil, last
}

func start(ctx context.Context, bin, dir string, timeout time.Duration) (*Redis, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no", "--logfile", "", "--daemonize", "no")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	r := &Redis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if log.Len() < 4096 {
				log.WriteString(sc.Text() + "\n")
			}
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				close(ready)
				_, _ = io.Copy(io.Discard, out)
				break
			}
		}
		_ = cmd.Wait()
		close(r.done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ready:
		return r, nil
	case <-r.done:
		return nil, fmt.Errorf("redis-server on port %d exited before it was ready:\n%s", port, log.String())
	case <-timer.C:
		r.Stop()
		return nil, fmt.Errorf("redis-server on port %d not ready after %s", port, timeout)
	}
}

// PID is the redis-server's process id (a benchmark counts its CPU).
func (r *Redis) PID() int { return r.cmd.Process.Pid }

// Stop terminates redis-server and waits for it.
func (r *Redis) Stop() {
	if r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
	}
	<-r.done
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
