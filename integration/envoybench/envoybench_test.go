package envoybench

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestSmoke runs every measurement at a tiny scale against the real
// Envoy, l7, Redis and wrk (tools/deps.sh installs them), so the
// benchmark cannot rot unseen: each BENCH line is printed and parses,
// requests went through Envoy to the backend, the filters answered as
// configured, and every timed change was observed. Speed is not judged.
func TestSmoke(t *testing.T) {
	dir, err := os.MkdirTemp("", "ebt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	o := Options{Dir: dir, Net: netip.MustParseAddr("127.0.24.128"), Port: 24500,
		Connections: 10, Threads: 1, Duration: time.Second, Rounds: 1, Sessions: 50,
		XDSServices: 20, XDSChanges: 2, XDSChangeSize: 5,
		PropagationRoutes: 20, PropagationSamples: 2, ChurnDuration: 2 * time.Second, ChurnHosts: 5}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	f, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Report(&out, o, f)
	t.Log(out.String())

	bench := map[string]float64{}
	for _, m := range regexp.MustCompile(`(?m)^BENCH (\S+) (\S+) (\S+)`).FindAllStringSubmatch(out.String(), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Errorf("BENCH %s: value %q does not parse", m[1], m[2])
		}
		bench[m[1]] = v
	}
	for _, name := range []string{"envoy_rps_plain", "envoy_jwt_hs256_ratio", "envoy_session_csrf_ratio", "envoy_jwt_hs256_cpu_ratio",
		"envoy_session_csrf_cpu_ratio", "envoy_throughput_failed", "envoy_xds_p99_ack_ms_20", "envoy_route_propagation_p99_ms_20",
		"envoy_route_propagation_debounced_p99_ms_20", "envoy_non2xx_during_churn"} {
		if _, ok := bench[name]; !ok {
			t.Errorf("no BENCH %s line", name)
		}
	}
	for _, name := range []string{"envoy_rps_plain", "envoy_jwt_hs256_ratio", "envoy_session_csrf_ratio", "envoy_xds_p99_ack_ms_20", "envoy_route_propagation_p99_ms_20"} {
		if bench[name] <= 0 {
			t.Errorf("BENCH %s = %v, want > 0", name, bench[name])
		}
	}

	// Requests went through: Envoy alone answers plain and JWT, so none
	// may fail; session checks may time out on a loaded machine (503
	// after the interceptor's 200 ms), but most must pass.
	var ok int64
	for _, l := range loads {
		r := f.Throughput.Rounds[l][0]
		if r.Requests == 0 {
			t.Errorf("%s: no requests", l)
		}
		if limit := map[bool]int64{true: r.Requests / 10, false: 0}[l == loadSession]; r.Failed() > limit {
			t.Errorf("%s: %d of %d requests failed", l, r.Failed(), r.Requests)
		}
		ok += r.Requests - r.Failed()
	}
	if f.BackendRequests < ok {
		t.Errorf("the backend answered %d requests, fewer than the %d wrk saw succeed", f.BackendRequests, ok)
	}
	if len(f.XDS.AckMs) != o.XDSChanges || len(f.Propagation.NoDebounce) != o.PropagationSamples || len(f.Propagation.Debounced) != o.PropagationSamples {
		t.Errorf("timed %d xDS changes and %d+%d routes, want %d and %d+%d", len(f.XDS.AckMs), len(f.Propagation.NoDebounce), len(f.Propagation.Debounced),
			o.XDSChanges, o.PropagationSamples, o.PropagationSamples)
	}
	if f.Churn.Load.Requests == 0 || f.Churn.Added == 0 || f.Churn.Removed == 0 {
		t.Errorf("churn: %d requests, %d routes added, %d removed; want some of each", f.Churn.Load.Requests, f.Churn.Added, f.Churn.Removed)
	}
	if f.Churn.Load.Failed() != 0 {
		t.Errorf("churn: %d requests to unchanged routes failed", f.Churn.Load.Failed())
	}
}
