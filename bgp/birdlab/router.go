package birdlab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"
)

// Neighbor is one BGP session the router accepts.
type Neighbor struct {
	// Name is the BIRD protocol name (letters, digits, underscore).
	Name string
	// Address is the speaker's address.
	Address string
	// ASN is the speaker's AS.
	ASN uint32
	// Password, when set, turns on TCP MD5 for this session.
	Password string
	// Local is the router's address on this session; RouterConfig.RouterID when empty.
	Local string
	// BFD turns on `bfd on` for this session (RouterConfig.BFD must be set).
	BFD bool
}

// RouterConfig is the router's BIRD configuration.
type RouterConfig struct {
	// RouterID is the router's BGP identifier (an IPv4 address).
	RouterID string
	// ASN is the router's AS.
	ASN uint32
	// HoldTime and Keepalive are the BGP timers in seconds (3 and 1 when zero).
	HoldTime, Keepalive int
	// Neighbors are the speakers.
	Neighbors []Neighbor
	// BFD, when set, adds a `protocol bfd` with these timers (bfd.go).
	BFD *BFD
	// GracefulRestart turns on BGP graceful restart (RFC 4724) on every
	// session: BIRD keeps a restarting speaker's routes, marked stale,
	// until its End-of-RIB or the restart time.
	GracefulRestart bool
	// IPv6 adds an ipv6 channel to every session: IPv6 unicast routes
	// over the IPv4 sessions (MP-BGP), imported like the IPv4 ones and
	// installed, ECMP merged, into the namespace's kernel IPv6 table.
	IPv6 bool
}

// Router is one running BIRD in a network namespace.
type Router struct {
	stop sync.Once
	exit error
	dir  string
	sock string
	cmd  *exec.Cmd
	done chan error
}

// BIRD 2 config: import everything the speakers send, export nothing to
// them, and install ECMP (merge paths) into the namespace's kernel tables.
// Speakers are on the router's links, so next hops resolve directly, for
// iBGP sessions too.
var birdConf = template.Must(template.New("bird").Parse(`
router id {{.RouterID}};
log "{{.Dir}}/bird.log" all;
protocol device { scan time 1; }
protocol kernel {
  ipv4 { import none; export all; };
  merge paths on;
  scan time 1;
}
{{- if .IPv6}}
protocol kernel {
  ipv6 { import none; export all; };
  merge paths on;
  scan time 1;
}
{{- end}}
{{- with .BFD}}
protocol bfd {
  interface "*" { min rx interval {{.MinRxMilliseconds}} ms; min tx interval {{.MinTxMilliseconds}} ms; multiplier {{.Multiplier}}; };
}
{{- end}}
{{range .Neighbors}}
protocol bgp {{.Name}} {
  local {{if .Local}}{{.Local}}{{else}}{{$.RouterID}}{{end}} as {{$.ASN}};
  neighbor {{.Address}} as {{.ASN}};
  hold time {{$.Hold}};
  keepalive time {{$.Keepalive}};
  connect retry time 1;
  error wait time 1, 2;
  direct;
{{- if $.GracefulRestart}}
  graceful restart on;
{{- end}}
{{- if .Password}}
  password "{{.Password}}";
{{- end}}
{{- if .BFD}}
  bfd on;
{{- end}}
  ipv4 { import all; export none; };
{{- if $.IPv6}}
  ipv6 { import all; export none; };
{{- end}}
}
{{end}}`))

// StartRouter starts bird in the lab's router namespace, with the router
// address as router ID.
func (l *Lab) StartRouter(ctx context.Context, dir string, cfg RouterConfig) (*Router, error) {
	if cfg.RouterID == "" {
		cfg.RouterID = l.RouterAddr
	}
	return StartRouter(ctx, l.Router, dir, cfg)
}

// StartRouter writes a BIRD config into dir and starts bird in network
// namespace netns. It returns once birdc answers.
func StartRouter(ctx context.Context, netns, dir string, cfg RouterConfig) (*Router, error) {
	hold, keep := cfg.HoldTime, cfg.Keepalive
	if hold == 0 {
		hold = 3
	}
	if keep == 0 {
		keep = 1
	}
	conf := filepath.Join(dir, "bird.conf")
	f, err := os.Create(conf)
	if err != nil {
		return nil, fmt.Errorf("write bird config: %w", err)
	}
	err = birdConf.Execute(f, map[string]any{
		"RouterID": cfg.RouterID, "Dir": dir, "ASN": cfg.ASN, "Hold": hold, "Keepalive": keep, "Neighbors": cfg.Neighbors, "BFD": cfg.BFD,
		"GracefulRestart": cfg.GracefulRestart, "IPv6": cfg.IPv6,
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write bird config %s: %w", conf, err)
	}
	r := &Router{dir: dir, sock: filepath.Join(dir, "bird.ctl"), done: make(chan error, 1)}
	r.cmd = exec.Command("ip", "netns", "exec", netns, "bird", "-f", "-c", conf, "-s", r.sock, "-P", filepath.Join(dir, "bird.pid"))
	out, err := os.Create(filepath.Join(dir, "bird.out"))
	if err != nil {
		return nil, fmt.Errorf("create bird output file: %w", err)
	}
	r.cmd.Stdout, r.cmd.Stderr = out, out
	if err := r.cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("start bird in %s: %w", netns, err)
	}
	go func() { r.done <- r.cmd.Wait(); _ = out.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := r.Birdc(ctx, "show", "status"); err == nil {
			return r, nil
		}
		select {
		case err := <-r.done:
			b, _ := os.ReadFile(filepath.Join(dir, "bird.out"))
			return nil, fmt.Errorf("bird exited at start: %w: %s", err, b)
		case <-time.After(20 * time.Millisecond):
		}
	}
	r.Stop()
	return nil, errors.New("bird did not answer on its control socket within 10s")
}

// Stop kills bird and waits for it. Later calls do nothing.
func (r *Router) Stop() {
	r.stop.Do(func() {
		_ = r.cmd.Process.Kill()
		r.exit = <-r.done // "signal: killed", expected
	})
}

// Log returns bird's log file, for test failure messages.
func (r *Router) Log() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "bird.log"))
	return string(b)
}

// Birdc runs a restricted birdc command against this router.
func (r *Router) Birdc(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "birdc", append([]string{"-r", "-s", r.sock}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("birdc %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Disable shuts BIRD's protocol name down (`birdc disable NAME`, which
// restricted mode refuses): BIRD closes the session with a Cease and
// refuses the peer until enabled again, as an operator cutting a peer does.
func (r *Router) Disable(ctx context.Context, name string) error {
	out, err := exec.CommandContext(ctx, "birdc", "-s", r.sock, "disable", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("birdc disable %s: %w: %s", name, err, out)
	}
	if !strings.Contains(string(out), name+": disabled") {
		return fmt.Errorf("birdc disable %s: %s", name, out)
	}
	return nil
}

// Route is one BGP route in BIRD's table.
type Route struct {
	// Protocol is the BIRD protocol that learned it (the Neighbor name).
	Protocol string
	// NextHop is its gateway.
	NextHop string
}

// Routes returns BIRD's routes for exactly prefix, sorted by next hop.
func (r *Router) Routes(ctx context.Context, prefix string) ([]Route, error) {
	out, err := r.Birdc(ctx, "show", "route", prefix)
	if strings.Contains(out, "Network not found") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseRoutes(out), nil
}

// ParseRoutes reads `birdc show route` output: a route line carries
// "[proto time]" and the following "via ADDR on IF" line its next hop.
func ParseRoutes(out string) []Route {
	var routes []Route
	var proto string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "["); i >= 0 && (strings.Contains(line, " unicast ") || strings.HasPrefix(strings.TrimSpace(line), "unicast")) {
			rest := line[i+1:]
			if j := strings.IndexAny(rest, " ]"); j > 0 {
				proto = rest[:j]
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "via" && proto != "" {
			routes = append(routes, Route{Protocol: proto, NextHop: f[1]})
		}
	}
	slices.SortFunc(routes, func(a, b Route) int { return strings.Compare(a.NextHop, b.NextHop) })
	return routes
}

// ProtocolState returns the BGP state of neighbor name as birdc shows it
// in the Info column, e.g. "Established", "Active", "Connect".
func (r *Router) ProtocolState(ctx context.Context, name string) (string, error) {
	out, err := r.Birdc(ctx, "show", "protocols", name)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[0] == name {
			return f[5], nil
		}
	}
	return "", fmt.Errorf("protocol %s not in birdc output: %s", name, out)
}

// WaitRoutes polls until the routes for prefix satisfy ok, or timeout.
// It returns the last routes seen and how long it took.
func (r *Router) WaitRoutes(ctx context.Context, prefix string, timeout time.Duration, ok func([]Route) bool) ([]Route, time.Duration, error) {
	start := time.Now()
	var last []Route
	for time.Since(start) < timeout {
		rs, err := r.Routes(ctx, prefix)
		if err != nil {
			return nil, time.Since(start), err
		}
		last = rs
		if ok(rs) {
			return rs, time.Since(start), nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return last, time.Since(start), fmt.Errorf("routes for %s in bird after %v: %v", prefix, timeout, last)
}

// Session is one BGP session as `birdc show protocols all` reports it, read
// in one command so state and route count belong to the same instant.
type Session struct {
	// State is the BGP state ("Established", "Active", ...).
	State string
	// Imported is how many routes BIRD holds from this session.
	Imported int
	// Restarting is set while BIRD holds the session's routes as stale
	// for a graceful restart ("Neighbor graceful restart active").
	Restarting bool
}

// Session returns the state and imported route count of neighbor name.
func (r *Router) Session(ctx context.Context, name string) (Session, error) {
	out, err := r.Birdc(ctx, "show", "protocols", "all", name)
	if err != nil {
		return Session{}, err
	}
	return ParseSession(out), nil
}

// ParseSession reads `birdc show protocols all NAME` output.
func ParseSession(out string) Session {
	var s Session
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "BGP" && f[1] == "state:":
			s.State = f[2]
		case len(f) >= 3 && f[0] == "Routes:":
			_, _ = fmt.Sscanf(f[1], "%d", &s.Imported)
		case strings.TrimSpace(line) == "Neighbor graceful restart active":
			s.Restarting = true
		}
	}
	return s
}

// Attributes returns the attributes of BIRD's first route for exactly
// prefix (`birdc show route all`), by name: "BGP.local_pref" -> "200",
// "BGP.community" -> "(64512,100) (64512,200)". Nil when there is none.
func (r *Router) Attributes(ctx context.Context, prefix string) (map[string]string, error) {
	out, err := r.Birdc(ctx, "show", "route", "all", prefix)
	if strings.Contains(out, "Network not found") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseAttributes(out), nil
}

// ParseAttributes reads the "\tName: value" lines of the first route in
// `birdc show route all` output.
func ParseAttributes(out string) map[string]string {
	var attrs map[string]string
	for _, line := range strings.Split(out, "\n") {
		// A route line: "PREFIX  unicast [proto ...]", or "unreachable
		// [...]" and others; only attribute lines start with a tab.
		if line != "" && !strings.HasPrefix(line, "\t") && strings.Contains(line, " [") {
			if attrs != nil {
				break // the next route
			}
			attrs = map[string]string{}
			continue
		}
		name, value, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if attrs != nil && ok && strings.HasPrefix(line, "\t") {
			attrs[name] = strings.TrimSpace(value)
		}
	}
	return attrs
}
