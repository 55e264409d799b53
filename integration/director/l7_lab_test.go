//go:build lab

package director_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/topo"
)

// l7VIP has an L7 backend (the application behind its gateways); vip2
// has none, so its health stays its gateways'.
const (
	l7VIP = vip
	vip2  = "203.0.113.20"
)

// TestL7BackendDownWithdrawsOnlyItsVIP (issue 9, item 5, the L4 side):
// two real directors announce a /32 per VIP to BIRD (health.announce:
// vips). l7VIP's service lists one L7 backend, a TCP server in the app
// namespace. While it answers, both /32s are in BIRD and /vip/<l7VIP>
// answers 200. When it stops, each director's GTM answers 503 saying no
// L7 service has a ready backend and l7VIP's /32 leaves BIRD, while vip2
// stays announced by both directors, the directors stay ready and IPVS
// keeps its weights. When it answers again, the /32 comes back.
func TestL7BackendDownWithdrawsOnlyItsVIP(t *testing.T) {
	backendAddr := appAddr(0) + ":8080"
	d := buildDCWith(t, dcOptions{vips: []string{l7VIP, vip2}, announce: "vips", apps: 1,
		l7Backends: map[string][]string{l7VIP: {backendAddr}}})
	backend := startBackend(t, d.apps[0], backendAddr)
	ctx := context.Background()
	l7Route, route2 := l7VIP+"/32", vip2+"/32"

	d.startDirector(t, 0)
	d.startDirector(t, 1)
	for _, p := range []string{l7Route, route2} {
		if _, took, err := d.bird.WaitRoutes(ctx, p, 90*time.Second, hasNextHops(d.directorAddr...)); err != nil {
			d.diagnose(t)
			t.Fatalf("%s from both directors: %v", p, err)
		} else {
			t.Logf("%s in BIRD from both directors %v after the wait began", p, took.Round(time.Millisecond))
		}
	}
	for i := range d.directors {
		code, body, err := d.get(i, "/vip/"+l7VIP)
		if err != nil || code != 200 || !strings.Contains(body, "up healthy=2 total=2 l7-backends=1/1 services") {
			t.Errorf("director%d GTM with the backend up = %d %q %v, want 200 with l7-backends=1/1", i+1, code, body, err)
		}
		code, body, _ = d.get(i, "/vip/"+vip2)
		if code != 200 || strings.Contains(body, "l7-backends") {
			t.Errorf("director%d GTM of the VIP without L7 services = %d %q, want 200 without L7 state", i+1, code, body)
		}
	}
	weights := []map[string]string{d.weights(0), d.weights(1)}

	// The application stops.
	backend.stop()
	stoppedAt := time.Now()
	wantDown := "down healthy=2 total=2 l7-backends=0/1 services: no L7 service of the VIP has a ready backend"
	for i := range d.directors {
		var body string
		waitUntil(t, 30*time.Second, fmt.Sprintf("director%d GTM reports %s down for its L7 backend", i+1, l7VIP), func() bool {
			var code int
			code, body, _ = d.get(i, "/vip/"+l7VIP)
			return code == 503 && strings.Contains(body, wantDown)
		})
		took := time.Since(stoppedAt)
		t.Logf("director%d: GTM 503 %q %v after the backend stopped (fall %d x %v)", i+1, body, took.Round(time.Millisecond), healthFall, healthInterval)
		t.Logf("BENCH director_l7_backend_down_to_gtm_503_ms %d ms", took.Milliseconds())
	}
	_, _, err := d.bird.WaitRoutes(ctx, l7Route, 30*time.Second, hasNextHops())
	if err != nil {
		d.diagnose(t)
		t.Fatalf("%s still in BIRD with its only L7 backend down: %v", l7Route, err)
	}
	sinceStop := time.Since(stoppedAt)
	t.Logf("%s withdrawn from BIRD %v after the backend stopped", l7Route, sinceStop.Round(time.Millisecond))
	t.Logf("BENCH director_l7_backend_down_to_withdrawn_ms %d ms", sinceStop.Milliseconds())
	if rs, err := d.bird.Routes(ctx, route2); err != nil || !hasNextHops(d.directorAddr...)(rs) {
		t.Errorf("%s while %s is withdrawn: %v %v, want both directors", route2, l7Route, rs, err)
	}
	for i := range d.directors {
		if code, body, _ := d.get(i, "/readyz"); code != 200 {
			t.Errorf("director%d /readyz = %d %q: an application without backends must not make the director unready", i+1, code, body)
		}
		if w := d.weights(i); fmt.Sprint(w) != fmt.Sprint(weights[i]) {
			t.Errorf("director%d IPVS weights %v, were %v: L7 state must not change IPVS", i+1, w, weights[i])
		}
		if code, body, _ := d.get(i, "/vip/"+vip2); code != 200 {
			t.Errorf("director%d GTM of %s = %d %q, want 200", i+1, vip2, code, body)
		}
	}

	// The application answers again.
	backend.start()
	startedAt := time.Now()
	if _, _, err := d.bird.WaitRoutes(ctx, l7Route, 30*time.Second, hasNextHops(d.directorAddr...)); err != nil {
		d.diagnose(t)
		t.Fatalf("%s not announced again after the backend came back: %v", l7Route, err)
	}
	back := time.Since(startedAt)
	t.Logf("%s back in BIRD from both directors %v after the backend answered again (rise 2 x %v)", l7Route, back.Round(time.Millisecond), healthInterval)
	t.Logf("BENCH director_l7_backend_up_to_announced_ms %d ms", back.Milliseconds())
	for i := range d.directors {
		if code, body, _ := d.get(i, "/vip/"+l7VIP); code != 200 || !strings.Contains(body, "l7-backends=1/1 services") {
			t.Errorf("director%d GTM after recovery = %d %q, want 200 with l7-backends=1/1", i+1, code, body)
		}
	}
	if rs, _ := d.bird.Routes(ctx, route2); !hasNextHops(d.directorAddr...)(rs) {
		t.Errorf("%s after recovery: %v", route2, rs)
	}
}

// backendServer is an application backend: a TCP server that accepts and
// closes, started and stopped by the test.
type backendServer struct {
	t    *testing.T
	node *topo.Node
	addr string
	ln   net.Listener
}

func startBackend(t *testing.T, node *topo.Node, addr string) *backendServer {
	b := &backendServer{t: t, node: node, addr: addr}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *backendServer) start() {
	b.t.Helper()
	ln, err := b.node.Listen("tcp", b.addr)
	if err != nil {
		b.t.Fatalf("backend %s in %s: %v", b.addr, b.node.Name, err)
	}
	b.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
}

func (b *backendServer) stop() {
	if b.ln != nil {
		_ = b.ln.Close()
		b.ln = nil
	}
}
