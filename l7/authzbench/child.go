package authzbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Child runs the service side (Redis with sessions, the service, the
// external interceptor), prints "<authz addr> <external addr>" on out and
// runs until in is closed. The driver measures the child's CPU time, so
// the service's cost per check is its own, not the client's.
func Child(ctx context.Context, dir string, sessions int, in io.Reader, out io.Writer, log *slog.Logger) error {
	r, err := start(ctx, dir, sessions, log)
	if err != nil {
		return err
	}
	defer r.stop()
	if _, err := fmt.Fprintf(out, "%s %s\n", r.authzAddr, r.extAddr); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, in)
	return nil
}

// child is a running service child.
type child struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	authzAddr string
	extAddr   string
}

func startChild(ctx context.Context, self string, args []string) (*child, error) {
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
		return nil, fmt.Errorf("starting the service child: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 {
		_ = stdin.Close()
		werr := cmd.Wait()
		return nil, fmt.Errorf("service child did not start (said %q): %w", line, errors.Join(err, werr))
	}
	return &child{cmd: cmd, stdin: stdin, authzAddr: f[0], extAddr: f[1]}, nil
}

func (c *child) stop() error {
	_ = c.stdin.Close()
	return c.cmd.Wait()
}

// cpu is the child's user+system CPU time so far, from /proc.
func (c *child) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) start at 3.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
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
