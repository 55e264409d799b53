package health

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// TestBackendCheckerRiseFallOnRealSockets: the L7 backend checker uses the
// real servers' rise/fall on real loopback servers: a TCP target is up
// while it accepts and goes down after fall failed connects once closed;
// an HTTP target is up only with the expected status.
func TestBackendCheckerRiseFallOnRealSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcp := Target{Addr: netip.MustParseAddrPort(ln.Addr().String())}
	status := http.StatusNoContent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ready" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	httpAddr := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
	want204 := Target{Addr: httpAddr, Path: "/ready", Status: 204}
	any2xx := Target{Addr: httpAddr, Path: "/ready"}
	wrongPath := Target{Addr: httpAddr, Path: "/nope"}

	var changes []BackendChange
	c, err := NewBackendChecker(Config{Port: 1, Rise: 2, Fall: 2}, NewBackendProbes(nil), newFakeClock(), quiet(), nil,
		func(ch BackendChange) { changes = append(changes, ch) })
	if err != nil {
		t.Fatal(err)
	}
	c.SetTargets([]Target{tcp, want204, any2xx, wrongPath})
	ctx := t.Context()
	c.CheckOnce(ctx)
	for target, want := range map[Target]State{tcp: Up, want204: Up, any2xx: Up, wrongPath: Down} {
		if got := c.State(target); got != want {
			t.Errorf("after the first round %s is %s, want %s", target, got, want)
		}
	}
	if len(changes) != 4 {
		t.Fatalf("first round reported %d changes, want 4 (unknown -> decided)", len(changes))
	}

	// The TCP backend stops; the HTTP one answers 200 where 204 is expected.
	_ = ln.Close()
	status = http.StatusOK
	changes = nil
	c.CheckOnce(ctx)
	if c.State(tcp) != Up || c.State(want204) != Up {
		t.Fatal("one failure took a backend down with fall 2")
	}
	c.CheckOnce(ctx)
	if c.State(tcp) != Down || c.State(want204) != Down || c.State(any2xx) != Up {
		t.Fatalf("after fall failures: tcp %s, want-204 %s, any-2xx %s; want down, down, up", c.State(tcp), c.State(want204), c.State(any2xx))
	}
	// The two changes come in no particular order.
	var tcpErr, httpErr error
	for _, ch := range changes {
		if ch.Target == want204 {
			httpErr = ch.Err
		} else {
			tcpErr = ch.Err
		}
	}
	if len(changes) != 2 || tcpErr == nil || httpErr == nil || !strings.Contains(httpErr.Error(), "status 200") {
		t.Errorf("changes %+v, want two downs, the HTTP one naming status 200", changes)
	}

	// Dropped targets are forgotten.
	c.SetTargets([]Target{any2xx})
	if c.State(tcp) != Unknown {
		t.Errorf("a dropped target is %s, want unknown", c.State(tcp))
	}
}
