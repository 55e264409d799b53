package envoybench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/internal/benchchild"
	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// The three loads of the throughput run, on one listener each, so the
// plain listener's connection manager holds the router alone.
const (
	loadPlain   = "plain"
	loadJWT     = "jwt_hs256"
	loadSession = "session_csrf"
)

var loads = []string{loadPlain, loadJWT, loadSession}

func sessionID(i int) string { return "bench-" + strconv.Itoa(i) }

// measureThroughput runs the gateway of the three listeners and loads
// each in turn, Rounds times.
func measureThroughput(ctx context.Context, o Options, backend string) (Throughput, error) {
	root := filepath.Join(o.Dir, "tp")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Throughput{}, err
	}
	rp, err := redisproc.Start(ctx, root, 30*time.Second)
	if err != nil {
		return Throughput{}, err
	}
	defer rp.Stop()
	if err := fillSessions(ctx, rp.Addr, o.Sessions); err != nil {
		return Throughput{}, err
	}
	ls := throughputListeners{vip: o.addr(throughputVIP), ports: map[string]int{loadPlain: o.Port + 80, loadJWT: o.Port + 81, loadSession: o.Port + 82}}
	secret := make([]byte, 48)
	_, _ = rand.Read(secret)
	cfg, err := writeThroughputConfig(root, secret, ls, backend)
	if err != nil {
		return Throughput{}, err
	}
	o.progress("throughput: starting l7 and Envoy (3 listeners), Redis with %d sessions", o.Sessions)
	g, err := startGateway(ctx, root, o.addr(throughputHost), []string{"--config=" + cfg.path, "--authz-redis=" + rp.Addr}, true)
	if err != nil {
		return Throughput{}, err
	}
	defer g.Stop()

	reqs := throughputRequests(secret, o.Sessions)
	if err := checkThroughputListeners(ctx, g, ls, reqs); err != nil {
		return Throughput{}, err
	}
	scripts := map[string]string{}
	for _, l := range loads {
		if scripts[l], err = wrkScript(root, l, reqs[l]); err != nil {
			return Throughput{}, err
		}
	}
	pids := map[string]int{"envoy": g.EnvoyCmd.Process.Pid, "l7": g.L7Cmd.Process.Pid, "redis": rp.PID(), "backend": os.Getpid()}
	return runThroughputRounds(ctx, o, ls, scripts, pids)
}

// throughputListeners is where the gateway takes each load's requests:
// one address, one port per load.
type throughputListeners struct {
	vip   netip.Addr
	ports map[string]int
}

// addr is the host:port of a load's listener.
func (ls throughputListeners) addr(load string) string {
	return net.JoinHostPort(ls.vip.String(), strconv.Itoa(ls.ports[load]))
}

// writeThroughputConfig writes the DSL of the three listeners, one
// service each, and the JWT key they check, under root.
func writeThroughputConfig(root string, secret []byte, ls throughputListeners, backend string) (configDir, error) {
	cfg, err := newConfigDir(root)
	if err != nil {
		return configDir{}, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.path, "keys"), 0o755); err != nil {
		return configDir{}, err
	}
	if err := os.WriteFile(filepath.Join(cfg.path, "keys", "jwt.key"), secret, 0o600); err != nil {
		return configDir{}, err
	}
	vip := ls.vip
	files := map[string]string{
		"gateway.yaml": gatewayYAML(listenerDef{"plain", vip, ls.ports[loadPlain]}, listenerDef{"jwt", vip, ls.ports[loadJWT]},
			listenerDef{"session", vip, ls.ports[loadSession]}),
		"plain.yaml": serviceDef{name: "plain", host: "plain.bench", listener: "plain", endpoints: []string{backend}}.yaml(),
		"jwt.yaml": serviceDef{name: "jwt", host: "jwt.bench", listener: "jwt", endpoints: []string{backend},
			extra: "jwt:\n  hmacSecretFile: keys/jwt.key\n  algorithm: HS256\n  required: true\n"}.yaml(),
		"session.yaml": serviceDef{name: "app", host: "app.bench", listener: "session", endpoints: []string{backend},
			route: "    interceptors:\n      - {type: sessionInterceptor, headers: {user: x-user}}\n      - {type: csrfInterceptor}\n"}.yaml(),
	}
	for n, c := range files {
		if err := cfg.put(n, c); err != nil {
			return configDir{}, err
		}
	}
	return cfg, nil
}

// throughputRequests is the requests wrk sends for each load: plain, with
// a JWT signed by secret, and with one of up to 1000 of the sessions
// spread over all of them.
func throughputRequests(secret []byte, sessions int) map[string][]wrkRequest {
	token := hs256Token(secret, "bench-user", time.Now())
	reqs := map[string][]wrkRequest{
		loadPlain: {{Method: "GET", Path: "/", Headers: map[string]string{"Host": "plain.bench"}}},
		loadJWT:   {{Method: "GET", Path: "/", Headers: map[string]string{"Host": "jwt.bench", "Authorization": "Bearer " + token}}},
	}
	for i := range min(sessions, 1000) {
		reqs[loadSession] = append(reqs[loadSession], wrkRequest{Method: "POST", Path: "/api/tasks",
			Headers: map[string]string{"Host": "app.bench", "Origin": "http://app.bench", "Cookie": "session=" + sessionID(i*(sessions/min(sessions, 1000)))}})
	}
	return reqs
}

// checkThroughputListeners waits until each listener answers as its
// filters say, before anything is timed: the filter runs (a request
// without credentials is refused) and a request with them reaches the
// backend.
func checkThroughputListeners(ctx context.Context, g *envoyproc.Gateway, ls throughputListeners, reqs map[string][]wrkRequest) error {
	checks := []struct {
		load   string
		req    wrkRequest
		status int
	}{
		{loadPlain, reqs[loadPlain][0], 200},
		{loadJWT, wrkRequest{"GET", "/", map[string]string{"Host": "jwt.bench"}}, 401},
		{loadJWT, reqs[loadJWT][0], 200},
		{loadSession, wrkRequest{"POST", "/api/tasks", map[string]string{"Host": "app.bench", "Origin": "http://app.bench"}}, 401},
		{loadSession, wrkRequest{"POST", "/api/tasks", map[string]string{"Host": "app.bench", "Origin": "http://evil.example", "Cookie": "session=" + sessionID(0)}}, 403},
		{loadSession, reqs[loadSession][0], 200},
	}
	for _, c := range checks {
		if err := waitStatus(ctx, ls.addr(c.load), c.req, c.status, time.Minute); err != nil {
			return fmt.Errorf("throughput gateway, %s listener: %w\n--- envoy log:\n%s\n--- l7 log:\n%s", c.load, err, g.LogTail("envoy", 2000), g.LogTail("l7", 2000))
		}
	}
	return nil
}

// runThroughputRounds loads each listener in turn, Rounds times, and
// adds up the CPU time of the processes in pids and of wrk. On error it
// returns the rounds measured so far.
func runThroughputRounds(ctx context.Context, o Options, ls throughputListeners, scripts map[string]string, pids map[string]int) (Throughput, error) {
	t := Throughput{Rounds: map[string][]wrkResult{}, CPU: map[string]map[string]time.Duration{}}
	for round := range o.Rounds {
		for _, l := range loads {
			r, cpu, err := measureLoad(ctx, o, fmt.Sprintf("http://%s/", ls.addr(l)), scripts[l], pids)
			if err != nil {
				return t, err
			}
			if t.CPU[l] == nil {
				t.CPU[l] = map[string]time.Duration{}
			}
			for name, d := range cpu {
				t.CPU[l][name] += d
			}
			o.progress("throughput round %d %s: %.0f req/s, %d requests, %d failed", round+1, l, r.PerSecond, r.Requests, r.Failed())
			t.Rounds[l] = append(t.Rounds[l], r)
		}
	}
	return t, nil
}

// measureLoad runs wrk against url with script, after a warm-up when
// Options asks for one, and returns its result and the CPU time each
// process of pids, and wrk, used during the measured run.
func measureLoad(ctx context.Context, o Options, url, script string, pids map[string]int) (wrkResult, map[string]time.Duration, error) {
	if o.Warmup > 0 {
		if _, err := runWrk(ctx, url, script, o.Threads, o.Connections, o.Warmup); err != nil {
			return wrkResult{}, nil, err
		}
	}
	before, err := processCPU(pids)
	if err != nil {
		return wrkResult{}, nil, err
	}
	r, err := runWrk(ctx, url, script, o.Threads, o.Connections, o.Duration)
	if err != nil {
		return wrkResult{}, nil, err
	}
	after, err := processCPU(pids)
	if err != nil {
		return wrkResult{}, nil, err
	}
	used := map[string]time.Duration{"wrk": r.CPU}
	for name := range pids {
		used[name] = after[name] - before[name]
	}
	return r, used, nil
}

// processCPU is the CPU time each process of pids has used so far.
func processCPU(pids map[string]int) (map[string]time.Duration, error) {
	m := map[string]time.Duration{}
	for name, pid := range pids {
		d, err := benchchild.ProcessCPU(pid)
		if err != nil {
			return nil, fmt.Errorf("CPU time of %s: %w", name, err)
		}
		m[name] = d
	}
	return m, nil
}

// fillSessions writes n sessions, bench-0 .. bench-<n-1>, into Redis.
func fillSessions(ctx context.Context, addr string, n int) error {
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer func() { _ = rc.Close() }()
	const batch = 1000
	for i := 0; i < n; i += batch {
		p := rc.Pipeline()
		for j := i; j < min(i+batch, n); j++ {
			p.HSet(ctx, sessionstore.DefaultPrefix+sessionID(j), "user", "u-"+strconv.Itoa(j))
			p.Expire(ctx, sessionstore.DefaultPrefix+sessionID(j), 2*time.Hour)
		}
		if _, err := p.Exec(ctx); err != nil {
			return fmt.Errorf("writing sessions to Redis: %w", err)
		}
	}
	return nil
}

// waitStatus sends req to addr until it is answered with status (Envoy
// may still be taking the listener), or fails after within.
func waitStatus(ctx context.Context, addr string, r wrkRequest, status int, within time.Duration) error {
	c := envoyproc.ClientTo(addr, nil, false)
	deadline := time.Now().Add(within)
	var last string
	for {
		code, err := send(ctx, c, r)
		if err == nil && code == status {
			return nil
		}
		last = outcome(code, err)
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s (host %s): want %d, last %s", r.Method, r.Path, r.Headers["Host"], status, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// outcome says how a request ended: its status, or the error.
func outcome(code int, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("status %d", code)
}

// send sends one request and returns its status, the body read.
func send(ctx context.Context, c *http.Client, r wrkRequest) (int, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, "http://gateway"+r.Path, nil)
	if err != nil {
		return 0, err
	}
	for k, v := range r.Headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
