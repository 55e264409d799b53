package benchchild

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Child is a running child process.
type Child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

// Start runs self with args; the child's standard error is the parent's.
func Start(ctx context.Context, self string, args []string) (*Child, error) {
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the benchmark's child: %w", err)
	}
	return &Child{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}, nil
}

// Stdin is the child's standard input, for requests of the parent.
func (c *Child) Stdin() io.Writer { return c.stdin }

// Stop closes the child's standard input, which tells it to end, and waits
// for it.
func (c *Child) Stop() error {
	_ = c.stdin.Close()
	return c.cmd.Wait()
}

// ReadLine returns the fields of the next line the child writes that
// starts with prefix, skipping others.
func (c *Child) ReadLine(prefix string) ([]string, error) {
	for c.lines.Scan() {
		fs := strings.Fields(c.lines.Text())
		if len(fs) > 0 && fs[0] == prefix {
			return fs, nil
		}
	}
	return nil, fmt.Errorf("the benchmark's child ended before saying %q: %w", prefix, c.lines.Err())
}

// CPU is the child's user+system CPU time so far, from /proc.
func (c *Child) CPU() (time.Duration, error) { return ProcessCPU(c.cmd.Process.Pid) }

// ProcessCPU is a process's user+system CPU time so far, from /proc.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime of a /proc/PID/stat line.
func parseStatCPU(s string) (time.Duration, error) {
	// Fields after the command name (which may hold spaces) start at 3.
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0, fmt.Errorf("bad /proc stat: %q", s)
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat: %q", s)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad /proc stat: %q", s)
	}
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz, nil
}
