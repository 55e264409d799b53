package envoyproc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// AdminGet GETs path from Envoy's admin API (over its unix socket) and
// returns the status and body.
func (g *Gateway) AdminGet(ctx context.Context, path string) (int, []byte, error) {
	return g.adminDo(ctx, http.MethodGet, path)
}

// AdminPost POSTs to path on Envoy's admin API.
func (g *Gateway) AdminPost(ctx context.Context, path string) (int, []byte, error) {
	return g.adminDo(ctx, http.MethodPost, path)
}

func (g *Gateway) adminDo(ctx context.Context, method, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://envoy-admin"+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := g.admin().Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("envoy admin %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Ready reports whether Envoy's /ready says LIVE: it has started and
// initialised every listener and cluster from its first xDS responses.
func (g *Gateway) Ready(ctx context.Context) (bool, string) {
	code, body, err := g.AdminGet(ctx, "/ready")
	if err != nil {
		return false, err.Error()
	}
	return code == http.StatusOK, strings.TrimSpace(string(body))
}

// WaitReady waits until Ready or ctx ends; the error then says Envoy's
// last state and the end of both logs.
func (g *Gateway) WaitReady(ctx context.Context) error {
	return g.Wait(ctx, "envoy ready", g.Ready)
}

// Wait checks cond every 50 ms until it holds or ctx ends.
func (g *Gateway) Wait(ctx context.Context, what string, cond func(context.Context) (bool, string)) error {
	for {
		ok, why := cond(ctx)
		if ok {
			return nil
		}
		if done, err := g.Exited(g.EnvoyCmd); done {
			return fmt.Errorf("envoyproc: waiting for %s: envoy exited (%w)\n--- envoy log:\n%s", what, err, g.LogTail("envoy", 4000))
		}
		if done, err := g.Exited(g.L7Cmd); done {
			return fmt.Errorf("envoyproc: waiting for %s: l7 exited (%w)\n--- l7 log:\n%s", what, err, g.LogTail("l7", 4000))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("envoyproc: %s: %w (last: %s)\n--- envoy log:\n%s\n--- l7 log:\n%s", what, ctx.Err(), why,
				g.LogTail("envoy", 3000), g.LogTail("l7", 3000))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stats returns the admin API's counters and gauges whose names match
// the regular expression filter, as name -> value.
func (g *Gateway) Stats(ctx context.Context, filter string) (map[string]int64, error) {
	code, body, err := g.AdminGet(ctx, "/stats?filter="+filter)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("envoy admin /stats: %d %s", code, body)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); err == nil {
			out[name] = n
		}
	}
	return out, sc.Err()
}

// Stat returns one counter or gauge (0 when Envoy has none of that name).
func (g *Gateway) Stat(ctx context.Context, name string) (int64, error) {
	m, err := g.Stats(ctx, "^"+regexp.QuoteMeta(name)+"$")
	return m[name], err
}

// Listeners returns the names of the listeners Envoy has (active or
// warming), from /listeners.
func (g *Gateway) Listeners(ctx context.Context) ([]string, error) {
	code, body, err := g.AdminGet(ctx, "/listeners?format=json")
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("envoy admin /listeners: %d", code)
	}
	var ls struct {
		ListenerStatuses []struct {
			Name string `json:"name"`
		} `json:"listener_statuses"`
	}
	if err := json.Unmarshal(body, &ls); err != nil {
		return nil, fmt.Errorf("envoy admin /listeners: %w", err)
	}
	var names []string
	for _, l := range ls.ListenerStatuses {
		names = append(names, l.Name)
	}
	return names, nil
}
