package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// What the console reads of each endpoint, at most: a component's answer
// over its cap is an error for that component, never kept or rendered.
// /readyz is a short reason; /metrics, /vip/ and /routes grow with the
// VIPs and routes served (1,000 VIPs: about 1 MiB of metrics).
const (
	maxReadyBody   = 4 << 10
	maxMetricsBody = 16 << 20
	maxVIPBody     = 2 << 20
	maxRoutesBody  = 16 << 20
	// maxReason is what the page shows of a /readyz reason.
	maxReason = 256
)

// Endpoint is the obs listener of one component, e.g.
// {RoleDirector, "node-1", "http://10.0.0.1:9100"}.
type Endpoint struct {
	Role Role
	Name string
	URL  string
}

// HTTPComponents reads each endpoint's /readyz, /metrics and, for a
// director, /vip/ (its GTM answer), for an l7 server, /routes (the routes
// it serves), with Client.
type HTTPComponents struct {
	Endpoints []Endpoint
	Client    *http.Client
	// L7TokenFile holds the bearer token sent with an l7 server's /routes
	// (a projected ServiceAccount token of audience tlb-l7, re-read on
	// every page as the kubelet rotates it): l7 answers /routes only to a
	// caller RBAC lets get /tlb.io/l7/routes. Empty: no token, no routes.
	L7TokenFile string
}

// ListEndpoints implements ComponentSource: the endpoints given.
func (h HTTPComponents) ListEndpoints(context.Context) ([]Endpoint, error) {
	return h.Endpoints, nil
}

// ReadComponents reads every endpoint at once, in the order given.
func (h HTTPComponents) ReadComponents(ctx context.Context) []Component {
	out := make([]Component, len(h.Endpoints))
	var wg sync.WaitGroup
	for i, ep := range h.Endpoints {
		wg.Go(func() { out[i] = h.ReadComponent(ctx, ep) })
	}
	wg.Wait()
	return out
}

// ReadComponent implements ComponentSource: the endpoint's /readyz (an
// Envoy's /ready), /metrics (an Envoy's /stats/prometheus) and, for a
// director, /vip/, for an l7 server, /routes, all at once.
func (h HTTPComponents) ReadComponent(ctx context.Context, ep Endpoint) Component {
	c := Component{Role: ep.Role, Name: ep.Name, URL: ep.URL, VIPsBound: -1}
	base := strings.TrimRight(ep.URL, "/")
	readyPath, metricsPath := "/readyz", "/metrics"
	if ep.Role == RoleEnvoy {
		readyPath, metricsPath = "/ready", "/stats/prometheus?text_readouts"
	}
	var ready, metrics, gtm answer
	var routes Component
	var wg sync.WaitGroup
	wg.Go(func() { ready = h.answer(ctx, base+readyPath, "", maxReadyBody) })
	wg.Go(func() { metrics = h.answer(ctx, base+metricsPath, "", maxMetricsBody) })
	if ep.Role == RoleDirector {
		wg.Go(func() { gtm = h.answer(ctx, base+"/vip/", "", maxVIPBody) })
	}
	if ep.Role == RoleL7 {
		wg.Go(func() { h.readRoutes(ctx, base, &routes) })
	}
	wg.Wait()
	if ready.err != nil {
		c.Err = ready.err.Error()
		return c
	}
	c.Ready = ready.code == http.StatusOK
	if !c.Ready {
		c.ReadyReason = shorten(strings.TrimSpace(ready.body), maxReason)
	}
	switch {
	case metrics.err != nil:
		c.Err = metrics.err.Error()
		return c
	case metrics.code != http.StatusOK:
		c.Err = fmt.Sprintf("GET %s: HTTP %d", metricsPath, metrics.code)
		return c
	}
	if err := applyMetrics(&c, strings.NewReader(metrics.body)); err != nil {
		c.Err = fmt.Sprintf("GET %s: %v", metricsPath, err)
		return c
	}
	switch {
	case gtm.err != nil:
		c.Err = gtm.err.Error()
	case gtm.code == http.StatusOK:
		c.GTM = parseGTM(gtm.body)
	}
	// 404: the director has no health checks, so no GTM answer.
	c.Routes = routes.Routes
	if routes.Err != "" {
		c.Err = routes.Err
	}
	return c
}

// answer is one GET's outcome.
type answer struct {
	code int
	body string
	err  error
}

func (h HTTPComponents) answer(ctx context.Context, url, auth string, limit int64) answer {
	code, body, err := h.getWith(ctx, url, auth, limit)
	return answer{code, body, err}
}

// readRoutes reads an l7 server's /routes with the console's token.
func (h HTTPComponents) readRoutes(ctx context.Context, base string, c *Component) {
	var auth string
	if h.L7TokenFile != "" {
		b, err := os.ReadFile(h.L7TokenFile)
		if err != nil {
			c.Err = fmt.Sprintf("GET /routes: the console's l7 token: %v", err)
			return
		}
		auth = "Bearer " + strings.TrimSpace(string(b))
	}
	code, body, err := h.getWith(ctx, base+"/routes", auth, maxRoutesBody)
	switch {
	case err != nil:
		c.Err = err.Error()
	case code == http.StatusOK:
		if c.Routes, err = parseRoutes(body); err != nil {
			c.Err = fmt.Sprintf("GET /routes: %v", err)
		}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		c.Err = fmt.Sprintf("GET /routes: HTTP %d: l7 lists its routes only to a caller with its token (--l7-token-file): with the API server one RBAC lets get /tlb.io/l7/routes, in file mode the content of l7's --routes-token-file", code)
	}
	// 404: an l7 that lists no routes.
}

// getWith GETs url, with an Authorization header unless auth is empty,
// and returns its status and body; a body over limit is an error, read no
// further than limit+1 bytes.
func (h HTTPComponents) getWith(ctx context.Context, url, auth string, limit int64) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: read body: %w", url, err)
	}
	if int64(len(b)) > limit {
		return 0, "", fmt.Errorf("GET %s: the answer is over %d bytes; not read further", url, limit)
	}
	return resp.StatusCode, string(b), nil
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// parseGTM reads the director's /vip/ body: one line per VIP,
// "203.0.113.10 up healthy=2 total=2 ...".
func parseGTM(body string) map[string]GTMAnswer {
	out := map[string]GTMAnswer{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		out[f[0]] = GTMAnswer{Up: f[1] == "up", Line: sc.Text()}
	}
	return out
}
