package envoybench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkRequest is one request wrk sends; a load cycles through its
// requests, one after another on each connection.
type wrkRequest struct {
	Method  string
	Path    string
	Headers map[string]string
}

// wrkResult is what wrk reports of a run.
type wrkResult struct {
	Requests  int64
	PerSecond float64
	// Non2xx are responses other than 2xx/3xx; SocketErrors connect,
	// read, write and timeout errors.
	Non2xx       int64
	SocketErrors int64
	Seconds      float64
	// CPU is the CPU time wrk itself used (user+system).
	CPU time.Duration
}

// Failed is every request that did not get a 2xx or 3xx.
func (r wrkResult) Failed() int64 { return r.Non2xx + r.SocketErrors }

// wrkInstall says how to get wrk.
const wrkInstall = "wrk is not installed: run tools/deps.sh (Debian package wrk)"

// wrkScript writes a Lua script that prepares reqs once per thread (so
// every load costs wrk the same per request) and cycles through them.
func wrkScript(dir, name string, reqs []wrkRequest) (string, error) {
	var b strings.Builder
	b.WriteString("local reqs = {}\nlocal i = 0\ninit = function(args)\n")
	for _, r := range reqs {
		fmt.Fprintf(&b, "  reqs[#reqs+1] = wrk.format(%q, %q, {", r.Method, r.Path)
		for k, v := range r.Headers {
			fmt.Fprintf(&b, "[%q] = %q, ", k, v)
		}
		b.WriteString("}, nil)\n")
	}
	b.WriteString("end\nrequest = function()\n  i = i % #reqs + 1\n  return reqs[i]\nend\n")
	p := filepath.Join(dir, name+".lua")
	return p, os.WriteFile(p, []byte(b.String()), 0o600)
}

// runWrk runs wrk against url (http://VIP:port) for d with the script.
func runWrk(ctx context.Context, url, script string, threads, conns int, d time.Duration) (wrkResult, error) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return wrkResult{}, errors.New(wrkInstall)
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	cmd := exec.CommandContext(ctx, bin, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", strconv.Itoa(secs)+"s", "--timeout", "10s", "-s", script, url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %w\n%s", url, err, out)
	}
	r, err := parseWrk(string(out))
	if err != nil {
		return r, fmt.Errorf("wrk %s: %w\n%s", url, err, out)
	}
	r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, nil
}

var (
	wrkTotal   = regexp.MustCompile(`(?m)^\s*(\d+) requests in ([\d.]+)(us|ms|s|m)`)
	wrkRate    = regexp.MustCompile(`(?m)^Requests/sec:\s*([\d.]+)`)
	wrkNon2xx  = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses:\s*(\d+)`)
	wrkSockets = regexp.MustCompile(`(?m)^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// parseWrk reads wrk's summary.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkTotal.FindStringSubmatch(out)
	rate := wrkRate.FindStringSubmatch(out)
	if m == nil || rate == nil {
		return r, errors.New("no summary in wrk's output")
	}
	r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	secs, _ := strconv.ParseFloat(m[2], 64)
	switch m[3] {
	case "us":
		secs /= 1e6
	case "ms":
		secs /= 1e3
	case "m":
		secs *= 60
	}
	r.Seconds = secs
	r.PerSecond, _ = strconv.ParseFloat(rate[1], 64)
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkSockets.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			r.SocketErrors += n
		}
	}
	return r, nil
}
