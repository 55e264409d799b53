package drain

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// Drainer drains one Envoy through its admin API.
type Drainer struct {
	// Admin is the admin base URL, e.g. http://127.0.0.1:9901.
	Admin  string
	Client *http.Client
	Log    *slog.Logger
	// Poll is how often connections are counted.
	Poll time.Duration
	// L4Wait is how long the L4 tier takes to see the failed health check
	// and stop sending new connections (the directors' health fall x
	// interval plus a probe's timeout, with a margin). New connections
	// are served as usual meanwhile; the listeners drain after it.
	L4Wait time.Duration
	// Quiet: the drain ends only once no client connection is open and
	// none has been accepted for Quiet, so the L4 tier has stopped
	// sending new ones even when its checks took longer than L4Wait.
	Quiet time.Duration
	// Deadline bounds the whole drain, L4Wait included.
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

// Drain fails the health check, waits L4Wait while Envoy serves the new
// connections the L4 tier still sends, starts a graceful drain of all
// listeners, and returns once no client connection is open and none has
// come for Quiet, or at the deadline. Without the wait and the quiet
// period, a gateway with few connections open counted zero at once and
// was stopped while the directors still sent it new flows, which were
// refused (seen with the real Envoy behind real directors:
// integration/director TestMissionThroughEnvoy, 12 failed requests).
// Errors reaching the admin API end the drain early with an error; the
// caller then stops Envoy anyway.
func (d *Drainer) Drain(ctx context.Context) (Result, error) {
	start := d.Now()
	ctx, cancel := context.WithTimeout(ctx, d.Deadline)
	defer cancel()
	if err := d.post(ctx, "/healthcheck/fail"); err != nil {
		return Result{}, err
	}
	d.Log.Info("envoy health check failed; serving while the L4 tier stops sending new connections", "admin", d.Admin, "wait", d.L4Wait)
	select {
	case <-ctx.Done():
		d.Log.Warn("envoy drain deadline reached while waiting for the L4 tier", "wait", d.L4Wait, "deadline", d.Deadline)
		return Result{Active: -1, TimedOut: true, Took: d.Now().Sub(start)}, nil
	case <-time.After(d.L4Wait):
	}
	if err := d.post(ctx, "/drain_listeners?graceful"); err != nil {
		return Result{}, err
	}
	d.Log.Info("envoy draining", "admin", d.Admin, "quiet", d.Quiet, "deadline", d.Deadline)
	tick := time.NewTicker(d.Poll)
	defer tick.Stop()
	last := Connections{Active: -1, Accepted: -1} // -1 until read
	var quietSince time.Time
	for {
		c, err := d.connections(ctx)
		switch {
		case err == nil:
			if c.Accepted != last.Accepted {
				quietSince = d.Now()
			}
			last = c
			if c.Active == 0 && d.Now().Sub(quietSince) >= d.Quiet {
				return Result{Took: d.Now().Sub(start)}, nil
			}
		case ctx.Err() == nil:
			d.Log.Warn("read envoy connection count", "admin", d.Admin, "err", err)
		}
		select {
		case <-ctx.Done():
			d.Log.Warn("envoy drain deadline reached", "active", last.Active)
			return Result{Active: last.Active, TimedOut: true, Took: d.Now().Sub(start)}, nil
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

// connections reads the client connections of every listener except
// admin and stats from Envoy's plain-text /stats.
func (d *Drainer) connections(ctx context.Context) (Connections, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.Admin+"/stats?filter="+url.QueryEscape(`downstream_cx_(active|total)$`), nil)
	if err != nil {
		return Connections{}, err
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return Connections{}, fmt.Errorf("envoy admin GET /stats: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return Connections{}, fmt.Errorf("envoy admin GET /stats: status %s", resp.Status)
	}
	return ReadConnections(resp.Body)
}
