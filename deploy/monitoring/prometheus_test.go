package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/osrg/gobgp/v3/pkg/server"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/internal/obs"
)

const (
	routerAddr  = "127.0.0.1"
	speakerAddr = "127.0.0.2"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRouter is a BGP router (GoBGP, passive) the speaker peers with.
func startRouter(t *testing.T) (*server.BgpServer, int) {
	t.Helper()
	port := freePort(t)
	r := server.NewBgpServer()
	go r.Serve()
	ctx := context.Background()
	if err := r.StartBgp(ctx, &api.StartBgpRequest{Global: &api.Global{
		Asn: 64500, RouterId: "198.18.255.1", ListenPort: int32(port), ListenAddresses: []string{routerAddr}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddPeer(ctx, &api.AddPeerRequest{Peer: &api.Peer{
		Conf:      &api.PeerConf{NeighborAddress: speakerAddr, PeerAsn: 64512},
		Timers:    &api.Timers{Config: &api.TimersConfig{HoldTime: 3, KeepaliveInterval: 1, ConnectRetry: 1}},
		Transport: &api.Transport{PassiveMode: true, LocalAddress: routerAddr},
	}}); err != nil {
		t.Fatal(err)
	}
	return r, port
}

// alertState asks Prometheus for the state of alert for peer: "" (none),
// "pending" or "firing".
func alertState(t *testing.T, promAddr, alert, peer string) string {
	t.Helper()
	resp, err := http.Get("http://" + promAddr + "/api/v1/alerts")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("decode Prometheus alerts: %v", err)
	}
	for _, a := range body.Data.Alerts {
		if a.Labels["alertname"] == alert && a.Labels["peer"] == peer {
			return a.State
		}
	}
	return ""
}

// TestPrometheusFiresBGPSessionDown: a real Prometheus (Debian's
// prometheus package) scrapes a director's real metrics listener (the obs
// server, a GoBGP speaker peered with a GoBGP router) with rules.yaml, and
// fires TLBBGPSessionDown for that peer when the router goes away, and not
// before. The `for:` durations are shortened to 2s in the copy it loads:
// promtool's tests cover the durations, this test the expressions against
// the series the code really exposes.
func TestPrometheusFiresBGPSessionDown(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not installed (tools/deps.sh installs Debian's prometheus package)")
	}
	log := slog.New(slog.DiscardHandler)
	router, port := startRouter(t)
	defer router.Stop()

	metrics := obs.NewServer("127.0.0.1:0", log)
	sp, err := bgp.NewSpeaker(bgp.Config{LocalASN: 64512, RouterID: "198.18.255.2", ListenPort: bgp.NoListen,
		AllowedPrefixes: []string{"203.0.113.0/24"},
		Peers:           []bgp.PeerConfig{{Address: routerAddr, ASN: 64500, Port: uint16(port), LocalAddress: speakerAddr}}},
		log, metrics.Registry)
	if err != nil {
		t.Fatal(err)
	}
	target, err := metrics.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = metrics.Shutdown(context.Background()) }()
	ctx := context.Background()
	if err := sp.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sp.Stop(ctx) }()

	dir := t.TempDir()
	rules, err := os.ReadFile("rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules = regexp.MustCompile(`(?m)^(\s+for:) .*$`).ReplaceAll(rules, []byte("$1 2s"))
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [rules.yaml]
scrape_configs:
  - job_name: tlb-director
    static_configs: [{targets: [%q]}]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr, "--log.level=warn")
	out, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", b)
		}
	}()

	waitFor := func(what string, within time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(within)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v", what, within)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("session established", 15*time.Second, sp.Established)
	// Prometheus has scraped the established session (the gauge at 1) and
	// evaluated the rules several times: no alert.
	waitFor("Prometheus sees the session up", 60*time.Second, func() bool {
		return query(t, promAddr, `tlb_bgp_session_established{peer="127.0.0.1"} == 1`)
	})
	waitFor("several rule evaluations", 30*time.Second, func() bool {
		return query(t, promAddr, `count_over_time(tlb_bgp_session_established{peer="127.0.0.1"}[1m]) >= 4`)
	})
	if st := alertState(t, promAddr, "TLBBGPSessionDown", routerAddr); st != "" {
		t.Fatalf("TLBBGPSessionDown is %s while the session is up", st)
	}

	router.Stop() // the router goes away
	waitFor("TLBBGPSessionDown firing", 60*time.Second, func() bool {
		return alertState(t, promAddr, "TLBBGPSessionDown", routerAddr) == "firing"
	})
}

// query reports whether the instant query returns at least one series.
func query(t *testing.T, promAddr, q string) bool {
	t.Helper()
	resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return false
	}
	return len(body.Data.Result) > 0
}
