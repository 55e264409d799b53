package drain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Supervisor runs Envoy as a child process and stops it after a drain.
type Supervisor struct {
	Cmd     *exec.Cmd
	Drainer *Drainer
	Log     *slog.Logger
	// StopGrace is how long Envoy gets to exit after SIGTERM before SIGKILL.
	StopGrace time.Duration
}

// Run starts Envoy and waits. When ctx ends (SIGTERM reached the wrapper)
// it drains, then sends SIGTERM to Envoy, then SIGKILL after StopGrace.
// If Envoy exits on its own, Run returns its exit error.
func (s *Supervisor) Run(ctx context.Context) error {
	if err := s.Cmd.Start(); err != nil {
		return fmt.Errorf("start envoy %s: %w", s.Cmd.Path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.Cmd.Wait() }()
	select {
	case err := <-exited:
		return fmt.Errorf("envoy exited on its own: %w", err)
	case <-ctx.Done():
	}
	res, err := s.Drainer.Drain(context.WithoutCancel(ctx))
	if err != nil {
		s.Log.Error("envoy drain failed; stopping it anyway", "err", err)
	} else {
		s.Log.Info("envoy drained", "active", res.Active, "timedOut", res.TimedOut, "took", res.Took)
	}
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal envoy: %w", err)
	}
	select {
	case err := <-exited:
		s.Log.Info("envoy stopped", "exit", fmt.Sprint(err))
		return nil
	case <-time.After(s.StopGrace):
		s.Log.Warn("envoy did not exit after SIGTERM; killing it", "grace", s.StopGrace)
		_ = s.Cmd.Process.Kill()
		err := <-exited
		s.Log.Info("envoy killed", "exit", fmt.Sprint(err))
		return nil
	}
}
