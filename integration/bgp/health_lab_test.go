//go:build lab

package bgp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/tlb/health"
)

// healthEndpoint serves GET /healthz on <gateway>:8081, 200 or 503.
func healthEndpoint(t *testing.T, gw *topo.Node, addr string, ok *atomic.Bool) {
	ln, err := gw.Listen("tcp", addr+":8081")
	if err != nil {
		t.Fatalf("health endpoint in %s: %v", gw.Name, err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !ok.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// weights reads the real servers' weights of the VIP service in dir.
func weights(dir *topo.Node) map[string]string {
	out, _ := dir.Cmd("ipvsadm", "-Ln").CombinedOutput()
	w := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "->" && f[2] == "Tunnel" {
			w[strings.TrimSuffix(f[1], ":80")] = f[3]
		}
	}
	return w
}

// newFlows sends n new requests and returns how many each gateway accepted.
func (d *dc) newFlows(t *testing.T, n int) []int64 {
	t.Helper()
	before := make([]int64, len(d.accepted))
	for i, a := range d.accepted {
		before[i] = a.Load()
	}
	for i := range n {
		if err := d.request(); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	out := make([]int64, len(d.accepted))
	for i, a := range d.accepted {
		out[i] = a.Load() - before[i]
	}
	return out
}

func gtmGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestGatewayHealthDrivesWeightsAndGTM wires tlb/health the way the
// director will: each director runs a Checker (HTTP, from its own
// namespace) whose changes set weight 0 on a failed gateway (through tlb's
// config, applied by the running tlb). A failed gateway gets no new flows
// within the fall count, existing streams are untouched, the GTM endpoint
// reports the VIP down when every gateway failed, and recovery brings
// flows back.
func TestGatewayHealthDrivesWeightsAndGTM(t *testing.T) {
	d := buildDC(t, labBin(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, _, err := d.bird.WaitRoutes(ctx, vipSubnet, 90*time.Second, hasNextHops(d.directorAddr...)); err != nil {
		t.Fatalf("both directors in bird: %v", err)
	}

	healthy := make([]*atomic.Bool, len(d.gateways))
	for i, gw := range d.gateways {
		healthy[i] = &atomic.Bool{}
		healthy[i].Store(true)
		healthEndpoint(t, gw, d.gatewayAddr[i], healthy[i])
	}
	// Generous timeouts: the emulated VM is 5-10x slower than a real node.
	cfg := health.Config{Kind: health.KindHTTP, Port: 8081, Interval: 1500 * time.Millisecond, Timeout: 1500 * time.Millisecond, Rise: 2, Fall: 3}.Defaulted()
	var gws []netip.Addr
	for _, a := range d.gatewayAddr {
		gws = append(gws, netip.MustParseAddr(a))
	}
	checkers := make([]*health.Checker, len(d.directors))
	downAt := make([]atomic.Int64, len(d.directors)) // when each checker decided gateway1 is down
	for i, dir := range d.directors {
		var mu sync.Mutex
		down := map[string]bool{}
		onChange := func(ch health.Change) {
			mu.Lock()
			defer mu.Unlock()
			down[ch.RealServer.String()] = ch.State == health.Down
			if ch.RealServer == gws[0] && ch.State == health.Down && downAt[i].Load() == 0 {
				downAt[i].Store(ch.At.UnixNano())
			}
			// The director's glue: weight 0 for a down real server.
			tmp := d.tlbConfig[i] + ".new"
			if err := os.WriteFile(tmp, []byte(tlbConfig(d.gatewayAddr, down)), 0o600); err == nil {
				_ = os.Rename(tmp, d.tlbConfig[i])
			}
		}
		log := slog.New(slog.NewTextHandler(tlog{t}, nil)).With("node", dir.Name)
		c, err := health.NewChecker(cfg, health.NewProber(cfg, dir.DialContext), health.SystemClock{}, log, nil, onChange)
		if err != nil {
			t.Fatal(err)
		}
		c.SetRealServers(gws)
		checkers[i] = c
		go c.Run(ctx)
	}
	gtm := health.NewGTM(checkers[0])
	gtm.SetVIPs(health.VIPTable{netip.MustParseAddr(vip): gws})
	gtmSrv := httptest.NewServer(gtm)
	defer gtmSrv.Close()
	vipURL := gtmSrv.URL + "/vip/" + vip

	waitUntil(t, 30*time.Second, "both checkers see both gateways up", func() bool {
		for _, c := range checkers {
			for _, g := range gws {
				if !c.Up(g) {
					return false
				}
			}
		}
		return true
	})
	if got := d.newFlows(t, 40); got[0] == 0 || got[1] == 0 {
		t.Fatalf("new flows per gateway with both healthy: %v, want both > 0", got)
	}

	// Long-lived streams across every change below.
	sctx, stopStreams := context.WithCancel(ctx)
	var ss []*stream
	var wg sync.WaitGroup
	for i := range 10 {
		c, err := d.client.DialContext(ctx, "tcp", vip+":80")
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		defer c.Close()
		s := &stream{conn: c}
		ss = append(ss, s)
		wg.Go(func() { s.run(sctx, 200*time.Millisecond) })
	}

	// Gateway 1's health endpoint fails.
	failAt := time.Now()
	healthy[0].Store(false)
	waitUntil(t, 30*time.Second, "both directors put gateway1 at weight 0", func() bool {
		return weights(d.directors[0])[d.gatewayAddr[0]] == "0" && weights(d.directors[1])[d.gatewayAddr[0]] == "0"
	})
	took := time.Since(failAt)
	// A round lasts at most interval + timeout; fall failing rounds, plus
	// the one already under way when the endpoint failed.
	bound := time.Duration(cfg.Fall+1) * (cfg.Interval + cfg.Timeout)
	for i := range d.directors {
		decided := time.Unix(0, downAt[i].Load()).Sub(failAt)
		t.Logf("%s decided gateway1 down %v after its health failed (bound %v)", d.directors[i].Name, decided.Round(time.Millisecond), bound)
		if decided > bound {
			t.Errorf("%s took %v to decide, more than fall %d rounds allow (%v)", d.directors[i].Name, decided, cfg.Fall, bound)
		}
	}
	t.Logf("gateway1 at weight 0 in both directors' IPVS %v after its health failed (decision + tlb applying its config)", took.Round(time.Millisecond))
	if got := d.newFlows(t, 40); got[0] != 0 || got[1] != 40 {
		t.Errorf("new flows per gateway with gateway1 down: %v, want [0 40]", got)
	}
	if code, body := gtmGet(t, vipURL); code != 200 || !strings.Contains(body, "healthy=1 total=2") {
		t.Errorf("GTM with one gateway down: %d %q, want 200 healthy=1", code, body)
	}

	// Every gateway fails: the VIP is down for GTM, and not announced in
	// per-VIP mode.
	healthy[1].Store(false)
	waitUntil(t, 30*time.Second, "director1's checker sees gateway2 down", func() bool { return !checkers[0].Up(gws[1]) })
	code, body := gtmGet(t, vipURL)
	t.Logf("GTM with every gateway down: %d %q", code, body)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "down healthy=0 total=2") {
		t.Errorf("GTM with every gateway down: %d %q, want 503 healthy=0", code, body)
	}
	hs := health.Evaluate(health.VIPTable{netip.MustParseAddr(vip): gws}, checkers[0])
	ready, reason := health.Readiness(true, hs)
	if ready || len(health.Announcement(ready, health.AnnounceVIPs, []netip.Prefix{netip.MustParsePrefix(vipSubnet)}, hs)) != 0 {
		t.Errorf("with every gateway down: ready=%v (%s), want not ready and nothing to announce", ready, reason)
	}

	// Both recover: weights come back, gateway1 gets new flows again.
	healthy[0].Store(true)
	healthy[1].Store(true)
	waitUntil(t, 30*time.Second, "both directors restore weight 1", func() bool {
		for _, dir := range d.directors {
			w := weights(dir)
			if w[d.gatewayAddr[0]] != "1" || w[d.gatewayAddr[1]] != "1" {
				return false
			}
		}
		return true
	})
	if got := d.newFlows(t, 40); got[0] == 0 || got[1] == 0 {
		t.Errorf("new flows per gateway after recovery: %v, want both > 0", got)
	}
	if code, body := gtmGet(t, vipURL); code != 200 || !strings.Contains(body, "healthy=2 total=2") {
		t.Errorf("GTM after recovery: %d %q", code, body)
	}

	stopStreams()
	wg.Wait()
	for i, s := range ss {
		if _, n, err := s.state(); err != nil || n < 5 {
			t.Errorf("stream %d: %d exchanges, err %v; want it untouched by health changes", i, n, err)
		}
	}
}
