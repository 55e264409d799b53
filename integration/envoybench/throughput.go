package envoybench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
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

// Throughput is the throughput run's figures: every round of each load,
// and the CPU time each process used during a load's measured runs.
type Throughput struct {
	Rounds map[string][]wrkResult
	CPU    map[string]map[string]time.Duration
}

// The processes whose CPU time a throughput load counts.
var cpuProcesses = []string{"envoy", "l7", "redis", "backend", "wrk"}

// requests is every measured request of a load.
func (t Throughput) requests(load string) int64 {
	var n int64
	for _, r := range t.Rounds[load] {
		n += r.Requests
	}
	return n
}

// CPUPerRequest is a process's CPU time per request of a load ("" for
// all of them).
func (t Throughput) CPUPerRequest(load, process string) time.Duration {
	n := t.requests(load)
	if n == 0 {
		return 0
	}
	var sum time.Duration
	for p, d := range t.CPU[load] {
		if process == "" || p == process {
			sum += d
		}
	}
	return sum / time.Duration(n)
}

// CPURatio is the plain load's CPU time per request over this load's, all
// processes counted: the throughput ratio a machine doing nothing else,
// saturated by these processes, would show. Other work on the machine
// does not move it as it moves the req/s ratio.
func (t Throughput) CPURatio(load string) float64 {
	if c := t.CPUPerRequest(load, ""); c > 0 {
		return float64(t.CPUPerRequest(loadPlain, "")) / float64(c)
	}
	return 0
}

// total is a load's requests and seconds over its rounds.
func (t Throughput) rate(load string) float64 {
	var n int64
	var s float64
	for _, r := range t.Rounds[load] {
		n += r.Requests
		s += r.Seconds
	}
	if s == 0 {
		return 0
	}
	return float64(n) / s
}

// Ratio is a load's rate over the plain rate, over all rounds.
func (t Throughput) Ratio(load string) float64 {
	if p := t.rate(loadPlain); p > 0 {
		return t.rate(load) / p
	}
	return 0
}

// RoundRatio is the ratio within round i alone.
func (t Throughput) RoundRatio(load string, i int) float64 {
	if p := t.Rounds[loadPlain][i].PerSecond; p > 0 {
		return t.Rounds[load][i].PerSecond / p
	}
	return 0
}

// MedianRatio is the median of the rounds' ratios: a round in which
// other work on the machine hit one load and not the other moves it less
// than it moves Ratio.
func (t Throughput) MedianRatio(load string) float64 {
	var rs []float64
	for i := range t.Rounds[load] {
		rs = append(rs, t.RoundRatio(load, i))
	}
	return percentile(rs, 50)
}

// Failed is every request of every load not answered 2xx/3xx.
func (t Throughput) Failed() int64 {
	var n int64
	for _, rs := range t.Rounds {
		for _, r := range rs {
			n += r.Failed()
		}
	}
	return n
}

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
	cfg, err := newConfigDir(root)
	if err != nil {
		return Throughput{}, err
	}
	secret := make([]byte, 48)
	_, _ = rand.Read(secret)
	if err := os.MkdirAll(filepath.Join(cfg.path, "keys"), 0o755); err != nil {
		return Throughput{}, err
	}
	if err := os.WriteFile(filepath.Join(cfg.path, "keys", "jwt.key"), secret, 0o600); err != nil {
		return Throughput{}, err
	}
	vip := o.addr(throughputVIP)
	ports := map[string]int{loadPlain: o.Port + 80, loadJWT: o.Port + 81, loadSession: o.Port + 82}
	files := map[string]string{
		"gateway.yaml": gatewayYAML(listenerDef{"plain", vip, ports[loadPlain]}, listenerDef{"jwt", vip, ports[loadJWT]},
			listenerDef{"session", vip, ports[loadSession]}),
		"plain.yaml": serviceDef{name: "plain", host: "plain.bench", listener: "plain", endpoints: []string{backend}}.yaml(),
		"jwt.yaml": serviceDef{name: "jwt", host: "jwt.bench", listener: "jwt", endpoints: []string{backend},
			extra: "jwt:\n  hmacSecretFile: keys/jwt.key\n  algorithm: HS256\n  required: true\n"}.yaml(),
		"session.yaml": serviceDef{name: "app", host: "app.bench", listener: "session", endpoints: []string{backend},
			route: "    interceptors:\n      - {type: sessionInterceptor, headers: {user: x-user}}\n      - {type: csrfInterceptor}\n"}.yaml(),
	}
	for n, c := range files {
		if err := cfg.put(n, c); err != nil {
			return Throughput{}, err
		}
	}
	o.progress("throughput: starting l7 and Envoy (3 listeners), Redis with %d sessions", o.Sessions)
	g, err := startGateway(ctx, root, o.addr(throughputHost), []string{"--config=" + cfg.path, "--authz-redis=" + rp.Addr}, true)
	if err != nil {
		return Throughput{}, err
	}
	defer g.Stop()

	token := hs256Token(secret, "bench-user", time.Now())
	reqs := map[string][]wrkRequest{
		loadPlain: {{Method: "GET", Path: "/", Headers: map[string]string{"Host": "plain.bench"}}},
		loadJWT:   {{Method: "GET", Path: "/", Headers: map[string]string{"Host": "jwt.bench", "Authorization": "Bearer " + token}}},
	}
	for i := range min(o.Sessions, 1000) {
		reqs[loadSession] = append(reqs[loadSession], wrkRequest{Method: "POST", Path: "/api/tasks",
			Headers: map[string]string{"Host": "app.bench", "Origin": "http://app.bench", "Cookie": "session=" + sessionID(i*(o.Sessions/min(o.Sessions, 1000)))}})
	}
	// Each listener answers as its filters say before anything is timed:
	// the filter runs (a request without credentials is refused) and a
	// request with them reaches the backend.
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
		addr := net.JoinHostPort(vip.String(), strconv.Itoa(ports[c.load]))
		if err := waitStatus(ctx, addr, c.req, c.status, time.Minute); err != nil {
			return Throughput{}, fmt.Errorf("throughput gateway, %s listener: %w\n--- envoy log:\n%s\n--- l7 log:\n%s", c.load, err, g.LogTail("envoy", 2000), g.LogTail("l7", 2000))
		}
	}
	scripts := map[string]string{}
	for _, l := range loads {
		if scripts[l], err = wrkScript(root, l, reqs[l]); err != nil {
			return Throughput{}, err
		}
	}
	t := Throughput{Rounds: map[string][]wrkResult{}, CPU: map[string]map[string]time.Duration{}}
	pids := map[string]int{"envoy": g.EnvoyCmd.Process.Pid, "l7": g.L7Cmd.Process.Pid, "redis": rp.PID(), "backend": os.Getpid()}
	cpus := func() (map[string]time.Duration, error) {
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
	for round := range o.Rounds {
		for _, l := range loads {
			url := fmt.Sprintf("http://%s/", net.JoinHostPort(vip.String(), strconv.Itoa(ports[l])))
			if o.Warmup > 0 {
				if _, err := runWrk(ctx, url, scripts[l], o.Threads, o.Connections, o.Warmup); err != nil {
					return t, err
				}
			}
			before, err := cpus()
			if err != nil {
				return t, err
			}
			r, err := runWrk(ctx, url, scripts[l], o.Threads, o.Connections, o.Duration)
			if err != nil {
				return t, err
			}
			after, err := cpus()
			if err != nil {
				return t, err
			}
			if t.CPU[l] == nil {
				t.CPU[l] = map[string]time.Duration{}
			}
			for name := range pids {
				t.CPU[l][name] += after[name] - before[name]
			}
			t.CPU[l]["wrk"] += r.CPU
			o.progress("throughput round %d %s: %.0f req/s, %d requests, %d failed", round+1, l, r.PerSecond, r.Requests, r.Failed())
			t.Rounds[l] = append(t.Rounds[l], r)
		}
	}
	return t, nil
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
