package drain

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// StatsListenerPrefix is the stat prefix of the gateway's read-only
// stats listener (l7/bootstrap): scrapes are not client traffic to wait for.
const StatsListenerPrefix = "tlb_stats"

// Drainer drains one Envoy through its admin API.
type Drainer struct {
	// Admin is the admin base URL, e.g. http://127.0.0.1:9901.
	Admin  string
	Client *http.Client
	Log    *slog.Logger
	// Poll is how often active connections are read.
	Poll time.Duration
	// Deadline bounds the whole drain.
	Deadline time.Duration
	Now      func() time.Time
}

// Result says how a drain ended.
type Result struct {
	// Active is the last count of active downstream connections read
	// (-1 if none could be read).
	Active int
	// TimedOut is true when the deadline came before zero.
	TimedOut bool
	Took     time.Duration
}

// Drain fails the health check, starts a graceful drain of all listeners,
// and waits for active downstream connections to reach zero or the
// deadline. Errors reaching the admin API end the drain early with an
// error; the caller then stops Envoy anyway.
func (d *Drainer) Drain(ctx context.Context) (Result, error) {
	start := d.Now()
	ctx, cancel := context.WithTimeout(ctx, d.Deadline)
	defer cancel()
	if err := d.post(ctx, "/healthcheck/fail"); err != nil {
		return Result{}, err
	}
	if err := d.post(ctx, "/drain_listeners?graceful"); err != nil {
		return Result{}, err
	}
	d.Log.Info("envoy draining", "admin", d.Admin, "deadline", d.Deadline)
	tick := time.NewTicker(d.Poll)
	defer tick.Stop()
	last := -1 // last count read; -1 until one is read
	for {
		n, err := d.active(ctx)
		switch {
		case err == nil && n == 0:
			return Result{Took: d.Now().Sub(start)}, nil
		case err == nil:
			last = n
		case ctx.Err() == nil:
			d.Log.Warn("read envoy connection count", "admin", d.Admin, "err", err)
		}
		select {
		case <-ctx.Done():
			d.Log.Warn("envoy drain deadline reached", "active", last)
			return Result{Active: last, TimedOut: true, Took: d.Now().Sub(start)}, nil
		case <-tick.C:
		}
	}
}

func (d *Drainer) post(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Admin+path, nil)
	if err != nil {
		return fmt.Errorf("envoy admin POST %s: %w", path, err)
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return fmt.Errorf("envoy admin POST %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("envoy admin POST %s: status %s", path, resp.Status)
	}
	return nil
}

// active sums downstream_cx_active over every listener except admin, from
// Envoy's plain-text /stats.
func (d *Drainer) active(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.Admin+"/stats?filter=downstream_cx_active", nil)
	if err != nil {
		return 0, err
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("envoy admin GET /stats: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("envoy admin GET /stats: status %s", resp.Status)
	}
	return SumActive(resp.Body)
}

// SumActive parses Envoy's text stats ("name: value" lines) and sums the
// listener.*.downstream_cx_active gauges, leaving out the admin and stats
// listeners.
func SumActive(r io.Reader) (int, error) {
	sum := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ": ")
		if !ok || !strings.HasPrefix(name, "listener.") || !strings.HasSuffix(name, ".downstream_cx_active") || strings.HasPrefix(name, "listener.admin.") || strings.HasPrefix(name, "listener."+StatsListenerPrefix+".") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			return 0, fmt.Errorf("parse envoy stat %q: %w", sc.Text(), err)
		}
		sum += n
	}
	return sum, sc.Err()
}
