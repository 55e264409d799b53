package apicheck

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// Prober asks the API server for something cheap; an error means it did
// not answer as it should.
type Prober interface {
	Probe(ctx context.Context) error
}

// ProberFunc adapts a function to Prober.
type ProberFunc func(ctx context.Context) error

// Probe calls f.
func (f ProberFunc) Probe(ctx context.Context) error { return f(ctx) }

// Checker probes the API server until its context ends.
type Checker struct {
	// Prober is asked on every check.
	Prober Prober
	// Server names the API server in logs and reasons (its URL).
	Server string
	// Log receives one line per failed check.
	Log *slog.Logger
	// Clock paces the checks.
	Clock clock.Clock
	// Interval is the pause between checks while the API server answers.
	Interval time.Duration
	// Timeout bounds one probe.
	Timeout time.Duration
	// Backoff paces the checks while it does not answer: Duration first,
	// times Factor after each failure, up to Cap, with Jitter.
	Backoff wait.Backoff
	// Report receives every state change: ok, or not with the reason.
	Report func(ok bool, reason string)
}

// Defaults for NewChecker.
const (
	// DefaultInterval is the pause between checks while the API server
	// answers.
	DefaultInterval = 10 * time.Second
	// DefaultTimeout bounds one probe.
	DefaultTimeout = 5 * time.Second
)

// DefaultBackoff retries after 1 s, 2 s, 4 s ... up to 30 s.
var DefaultBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: 30 * time.Second}

// NewChecker returns a Checker with the default pacing.
func NewChecker(p Prober, server string, log *slog.Logger, clk clock.Clock, report func(ok bool, reason string)) *Checker {
	return &Checker{Prober: p, Server: server, Log: log, Clock: clk, Interval: DefaultInterval,
		Timeout: DefaultTimeout, Backoff: DefaultBackoff, Report: report}
}

// Run checks until ctx ends. The first state is reported after the first
// probe.
func (c *Checker) Run(ctx context.Context) {
	backoff := c.Backoff
	failures := 0
	var last *bool
	for {
		err := c.probe(ctx)
		if ctx.Err() != nil {
			return
		}
		var next time.Duration
		if err == nil {
			if failures > 0 {
				c.Log.Info("API server answers again", "server", c.Server, "failedAttempts", failures)
			}
			failures, backoff = 0, c.Backoff
			next = c.Interval
		} else {
			failures++
			next = backoff.Step()
			c.Log.Error("API server unreachable; retrying with backoff", "server", c.Server,
				"attempt", failures, "retryIn", next.Round(time.Millisecond).String(), "err", err)
		}
		ok := err == nil
		if last == nil || *last != ok || !ok {
			reason := ""
			if !ok {
				reason = fmt.Sprintf("API server %s unreachable (%d failed attempts, next in %s): %v",
					c.Server, failures, next.Round(time.Millisecond), err)
			}
			c.Report(ok, reason)
			last = &ok
		}
		select {
		case <-ctx.Done():
			return
		case <-c.Clock.After(next):
		}
	}
}

func (c *Checker) probe(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	return c.Prober.Probe(pctx)
}
