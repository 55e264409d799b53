//go:build lab

package director_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/topo"
)

// rulesFile is deploy/monitoring/rules.yaml, the alert rules as shipped
// (lab-test.sh runs the test in this package's directory).
const rulesFile = "../../deploy/monitoring/rules.yaml"

// bgpDownFor is TLBBGPSessionDown's `for:` in rulesFile, used as is: the
// alert cannot fire sooner after the session is cut.
const bgpDownFor = time.Minute

// TestPrometheusFiresBGPSessionDownWhenBIRDCutsTheSession (issue 13,
// proof): a real Prometheus (Debian's package), started in director1's
// namespace, scrapes the real `tlb run` director's metrics listener with
// deploy/monitoring/rules.yaml loaded unchanged (1s scrape and evaluation
// intervals). While the director's session with BIRD is Established,
// TLBBGPSessionDown is inactive; after `birdc disable director1` it fires
// for that peer, and not before the rule's `for:` of 1 minute has passed,
// so the test takes a little over a minute after the cut.
func TestPrometheusFiresBGPSessionDownWhenBIRDCutsTheSession(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not installed (tools/deps.sh installs Debian's prometheus package)")
	}
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	d := buildDC(t)
	d.startDirector(t, 0)
	ctx := context.Background()
	if _, _, err := d.bird.WaitRoutes(ctx, vipSubnet, 90*time.Second, hasNextHops(d.directorAddr[0])); err != nil {
		d.diagnose(t)
		t.Fatalf("director1 announces to BIRD: %v", err)
	}
	peer := "198.18.1.1" // BIRD's address on director1's session

	p := startPrometheus(t, d.directors[0], prom, rules, "127.0.0.1:9100")
	waitUntil(t, 120*time.Second, "Prometheus scraped director1's session as Established", func() bool {
		return p.has(t, fmt.Sprintf(`tlb_bgp_session_established{job="tlb-director",peer=%q} == 1`, peer))
	})
	// Several evaluations of the rule on the established session: inactive.
	waitUntil(t, 60*time.Second, "TLBBGPSessionDown evaluated five times on the up session", func() bool {
		return p.has(t, fmt.Sprintf(`count_over_time(tlb_bgp_session_established{peer=%q}[1m]) >= 5`, peer))
	})
	if r := p.rule(t, "TLBBGPSessionDown"); r.State != "inactive" || r.Health != "ok" || len(r.Alerts) != 0 {
		t.Fatalf("TLBBGPSessionDown while the session is up: state %q health %q (%s) alerts %v, want inactive, ok, none",
			r.State, r.Health, r.LastError, r.Alerts)
	}

	cutAt := time.Now()
	if err := d.bird.Disable(ctx, "director1"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "Prometheus scraped director1's session as down", func() bool {
		return p.has(t, fmt.Sprintf(`tlb_bgp_session_established{peer=%q} == 0`, peer))
	})
	t.Logf("Prometheus saw the session down %v after the cut", time.Since(cutAt).Round(time.Millisecond))
	var firing alert
	waitUntil(t, bgpDownFor+90*time.Second, "TLBBGPSessionDown fires for BIRD's peer", func() bool {
		for _, a := range p.rule(t, "TLBBGPSessionDown").Alerts {
			if a.Labels["peer"] == peer && a.State == "firing" {
				firing = a
				return true
			}
		}
		return false
	})
	took := time.Since(cutAt)
	t.Logf("TLBBGPSessionDown firing %v after the cut (for: %v): labels %v", took.Round(time.Millisecond), bgpDownFor, firing.Labels)
	t.Logf("BENCH prometheus_bgp_session_down_alert_s %.1f s", took.Seconds())
	if took < bgpDownFor {
		t.Errorf("TLBBGPSessionDown fired %v after the cut, before its for: of %v", took, bgpDownFor)
	}
	if firing.Labels["instance"] != "127.0.0.1:9100" || firing.Labels["severity"] != "critical" {
		t.Errorf("firing alert labels %v, want instance 127.0.0.1:9100 and severity critical", firing.Labels)
	}
}

// prometheus is a real Prometheus running in a lab node.
type prometheus struct {
	client *http.Client
	addr   string
}

// startPrometheus runs prometheus in node, scraping target (an address in
// that node) every second as job tlb-director and evaluating rules every
// second; its web API listens on the node's loopback.
func startPrometheus(t *testing.T, node *topo.Node, bin, rules, target string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "prometheus.yml", fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: tlb-director
    static_configs: [{targets: [%q]}]
`, rules, target))
	p := &prometheus{client: node.HTTPClient(), addr: "127.0.0.1:9090"}
	node.Start(t, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+p.addr, "--log.level=warn")
	return p
}

// has reports whether the instant query q returns at least one series.
func (p *prometheus) has(t *testing.T, q string) bool {
	t.Helper()
	var body struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	return p.get(t, "/api/v1/query?query="+url.QueryEscape(q), &body) && len(body.Data.Result) > 0
}

// alert is one alert of a rule, as Prometheus's rules API shows it.
type alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// alertingRule is one alerting rule as Prometheus's rules API shows it.
type alertingRule struct {
	Name      string  `json:"name"`
	State     string  `json:"state"`
	Health    string  `json:"health"`
	LastError string  `json:"lastError"`
	Alerts    []alert `json:"alerts"`
}

// rule returns the alerting rule name; a zero rule when Prometheus does
// not answer or has not loaded it.
func (p *prometheus) rule(t *testing.T, name string) alertingRule {
	t.Helper()
	var body struct {
		Data struct {
			Groups []struct {
				Rules []alertingRule `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if !p.get(t, "/api/v1/rules?type=alert", &body) {
		return alertingRule{}
	}
	for _, g := range body.Data.Groups {
		for _, r := range g.Rules {
			if r.Name == name {
				return r
			}
		}
	}
	return alertingRule{}
}

// get decodes the JSON answer to path into v; false if Prometheus does not
// answer 200 (yet).
func (p *prometheus) get(t *testing.T, path string, v any) bool {
	t.Helper()
	resp, err := p.client.Get("http://" + p.addr + path)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("decode Prometheus %s: %v", path, err)
	}
	return true
}
