package monitoring

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
)

// envoyLabels are the labels the rules and dashboards select Envoy's
// series by, per series.
var envoyLabels = map[string][]string{
	"envoy_http_downstream_rq_xx":          {"envoy_http_conn_manager_prefix", "envoy_response_code_class"},
	"envoy_http_downstream_rq_time_bucket": {"envoy_http_conn_manager_prefix", "le"},
	"envoy_http_downstream_cx_active":      {"envoy_http_conn_manager_prefix"},
	"envoy_cluster_membership_healthy":     {"envoy_cluster_name"},
	"envoy_cluster_membership_total":       {"envoy_cluster_name"},
}

// TestEnvoyNamesAreEnvoys: every envoy_* series the rules and dashboards
// use exists, with the labels they select on, in what the real Envoy
// serves on the gateway's stats listener (deploy/envoy's bootstrap and
// arguments, integration/envoyproc) after a request through a DSL
// listener to a backend; and that listener's series are among them, so
// the filter the rules use (envoy_http_conn_manager_prefix!~"admin|tlb_stats")
// leaves exactly the gateway listeners. The code
// declares no Envoy series, so TestDashboardsAndRulesUseRegisteredMetrics
// leaves them to this test.
func TestEnvoyNamesAreEnvoys(t *testing.T) {
	used := usedNames(t)
	var names []string
	for n := range used {
		if strings.HasPrefix(n, "envoy_") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		t.Fatal("the rules and dashboards use no Envoy series")
	}
	series := envoySeries(t)
	for _, n := range names {
		labels, ok := series[n]
		if !ok {
			t.Errorf("%s (used by %v) is not a series the real Envoy serves", n, used[n])
			continue
		}
		for _, l := range envoyLabels[n] {
			if !labels[l] {
				t.Errorf("%s has no label %s in the real Envoy's output", n, l)
			}
		}
	}
	// The gateway listener's own series, under the names the rules use:
	// with the listener's name as stat prefix (dots and all), Envoy put
	// them under envoy_http_0_31_1_<port>_downstream_rq_xx, prefix
	// "http-127".
	prefixes := series["envoy_http_downstream_rq_xx"]
	var gateway []string
	for p := range prefixes {
		if v, ok := strings.CutPrefix(p, "envoy_http_conn_manager_prefix="); ok && v != "admin" && v != "tlb_stats" {
			gateway = append(gateway, v)
		}
	}
	if len(gateway) != 1 || !strings.HasPrefix(gateway[0], "http-127_0_31_1-") || !prefixes["envoy_http_conn_manager_prefix=tlb_stats"] {
		t.Errorf("envoy_http_downstream_rq_xx prefixes: gateway listeners %v, want one, http-127_0_31_1-<port>, beside tlb_stats; all: %v", gateway, prefixes)
	}
}

// envoySeries starts l7 and Envoy as deploy/envoy runs them, sends one
// request through a gateway listener, and returns the series names of
// the stats listener's /stats/prometheus with their label names and, for
// envoy_http_conn_manager_prefix, name=value too.
func envoySeries(t *testing.T) map[string]map[string]bool {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(backend.Close)
	const vip, host = "127.0.31.1", "127.0.31.2"
	dsl, port := envoyproc.HelloDSL(t, vip, backend.Listener.Addr().String())
	g := envoyproc.StartT(t, envoyproc.Options{Group: "edge", Serve: []string{"--config=" + dsl}, HostIP: host})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s:%d/", vip, port), nil)
	req.Host = "hello.example.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("through Envoy: %d", resp.StatusCode)
	}
	resp, err = http.Get("http://" + g.StatsAddr + "/stats/prometheus")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	series := map[string]map[string]bool{}
	line := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
	pair := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"`)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if series[m[1]] == nil {
			series[m[1]] = map[string]bool{}
		}
		for _, p := range pair.FindAllStringSubmatch(m[2], -1) {
			series[m[1]][p[1]] = true
			if p[1] == "envoy_http_conn_manager_prefix" {
				series[m[1]][p[1]+"="+p[2]] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return series
}
