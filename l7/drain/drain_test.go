package drain_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/drain"
)

// adminStandIn is an HTTP stand-in for Envoy's admin endpoints (no Envoy
// runs here): connections go away one per stats read once a graceful drain
// has started.
type adminStandIn struct {
	mu       sync.Mutex
	calls    []string
	at       []time.Time // when each call came
	active   int
	draining bool
	stuck    bool // connections never close
	accepted int  // connections ever accepted
	arrivals int  // stats reads during which a new connection comes
}

func (a *adminStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, r.Method+" "+r.URL.RequestURI())
	a.at = append(a.at, time.Now())
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/healthcheck/fail":
	case r.Method == http.MethodPost && r.URL.Path == "/drain_listeners" && r.URL.Query().Has("graceful"):
		a.draining = true
	case r.Method == http.MethodGet && r.URL.Path == "/stats":
		if a.draining && !a.stuck && a.active > 0 {
			a.active--
		}
		if a.arrivals > 0 {
			a.arrivals--
			a.accepted++
		}
		fmt.Fprintf(w, "listener.0.0.0.0_8080.downstream_cx_active: %d\nlistener.0.0.0.0_8443.downstream_cx_active: %d\nlistener.admin.downstream_cx_active: 1\nhttp.https-443.downstream_cx_active: 99\n", a.active/2, a.active-a.active/2)
		fmt.Fprintf(w, "listener.0.0.0.0_8443.downstream_cx_total: %d\nlistener.admin.downstream_cx_total: %d\n", a.accepted, len(a.calls))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (a *adminStandIn) log() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.calls...)
}

func drainer(url string, deadline time.Duration) *drain.Drainer {
	return &drain.Drainer{Admin: url, Client: http.DefaultClient, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Poll: 5 * time.Millisecond, Deadline: deadline, Now: time.Now}
}

func TestDrainWaitsForZero(t *testing.T) {
	a := &adminStandIn{active: 6}
	srv := httptest.NewServer(a)
	defer srv.Close()
	res, err := drainer(srv.URL, 5*time.Second).Drain(context.Background())
	if err != nil || res.TimedOut || res.Active != 0 {
		t.Fatalf("drain = %+v, %v", res, err)
	}
	calls := a.log()
	if calls[0] != "POST /healthcheck/fail" || calls[1] != "POST /drain_listeners?graceful" {
		t.Fatalf("call order %v: health check must fail first, then the graceful drain", calls)
	}
	stats := 0
	for _, c := range calls {
		if strings.HasPrefix(c, "GET /stats") {
			stats++
		}
	}
	if stats != 6 { // one connection closes per read; the 6th read sees 0
		t.Fatalf("read stats %d times, want 6: %v", stats, calls)
	}
}

// TestDrainWaitsForTheL4Tier: with no connection open, the drain still
// keeps Envoy serving for L4Wait after failing its health check, the time
// the directors take to stop sending it new flows, before draining the
// listeners and returning (the preStop hook, after which SIGTERM comes).
func TestDrainWaitsForTheL4Tier(t *testing.T) {
	a := &adminStandIn{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	d := drainer(srv.URL, 5*time.Second)
	d.L4Wait = 300 * time.Millisecond
	start := time.Now()
	res, err := d.Drain(context.Background())
	if err != nil || res.TimedOut || res.Active != 0 {
		t.Fatalf("drain = %+v, %v", res, err)
	}
	if took := time.Since(start); took < d.L4Wait {
		t.Errorf("the drain returned %v after it began, before the L4 wait of %v", took, d.L4Wait)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.calls) < 3 || a.calls[0] != "POST /healthcheck/fail" || a.calls[1] != "POST /drain_listeners?graceful" {
		t.Fatalf("calls %v: health check fails first, then the graceful drain, then connections are counted", a.calls)
	}
	if gap := a.at[1].Sub(a.at[0]); gap < d.L4Wait {
		t.Errorf("listeners drained %v after the health check failed, want at least the L4 wait %v", gap, d.L4Wait)
	}
}

// TestDrainWaitsUntilNewConnectionsStop: no connection is open at any
// read, but new ones keep coming (the L4 tier still sends them, its checks
// slower than the L4 wait): the drain returns only after none came for
// Quiet.
func TestDrainWaitsUntilNewConnectionsStop(t *testing.T) {
	a := &adminStandIn{arrivals: 8}
	srv := httptest.NewServer(a)
	defer srv.Close()
	d := drainer(srv.URL, 10*time.Second)
	d.Quiet = 100 * time.Millisecond
	res, err := d.Drain(context.Background())
	if err != nil || res.TimedOut || res.Active != 0 {
		t.Fatalf("drain = %+v, %v", res, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.arrivals != 0 {
		t.Fatalf("the drain returned while connections were still coming (%d more to come)", a.arrivals)
	}
	var reads []time.Time
	for i, c := range a.calls {
		if strings.HasPrefix(c, "GET /stats") {
			reads = append(reads, a.at[i])
		}
	}
	// The 8th read saw the last new connection; the drain returned after
	// a later read at least Quiet after it.
	if len(reads) < 9 || reads[len(reads)-1].Sub(reads[7]) < d.Quiet {
		t.Fatalf("%d stats reads, the last %v after the last new connection: want at least the quiet period %v", len(reads), reads[len(reads)-1].Sub(reads[min(7, len(reads)-1)]), d.Quiet)
	}
}

// TestDrainDeadlineDuringTheL4Wait: a deadline shorter than the wait ends
// the drain at the deadline, without draining.
func TestDrainDeadlineDuringTheL4Wait(t *testing.T) {
	a := &adminStandIn{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	d := drainer(srv.URL, 100*time.Millisecond)
	d.L4Wait = time.Minute
	res, err := d.Drain(context.Background())
	if err != nil || !res.TimedOut {
		t.Fatalf("drain = %+v, %v; want a timeout", res, err)
	}
	if calls := a.log(); len(calls) != 1 {
		t.Errorf("calls %v, want the failed health check alone", calls)
	}
}

func TestDrainStopsAtDeadline(t *testing.T) {
	a := &adminStandIn{active: 3, stuck: true}
	srv := httptest.NewServer(a)
	defer srv.Close()
	start := time.Now()
	res, err := drainer(srv.URL, 200*time.Millisecond).Drain(context.Background())
	if err != nil || !res.TimedOut || res.Active != 3 {
		t.Fatalf("drain = %+v, %v; want a timeout with 3 active", res, err)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 2*time.Second {
		t.Fatalf("took %v for a 200ms deadline", took)
	}
}

func TestDrainAdminDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	if _, err := drainer(srv.URL, time.Second).Drain(context.Background()); err == nil || !strings.Contains(err.Error(), "/healthcheck/fail") {
		t.Fatalf("want an error naming the admin call, got %v", err)
	}
}

// TestReadConnections sums the client listeners' gauges and counters,
// leaving out admin, the stats listener and the per-worker copies.
func TestReadConnections(t *testing.T) {
	in := "listener.0.0.0.0_80.downstream_cx_active: 4\nlistener.admin.downstream_cx_active: 2\ncluster.x.upstream_cx_active: 9\n" +
		"listener.[::]_443.downstream_cx_active: 1\nlistener.[::]_443.worker_0.downstream_cx_active: 1\n" +
		"listener.0.0.0.0_80.downstream_cx_total: 40\nlistener.203.0.113.10_443.downstream_cx_total: 2\nlistener.203.0.113.10_443.worker_1.downstream_cx_total: 2\n" +
		"listener.tlb_stats.downstream_cx_total: 700\nlistener.admin.downstream_cx_total: 80\n"
	c, err := drain.ReadConnections(strings.NewReader(in))
	if err != nil || c != (drain.Connections{Active: 5, Accepted: 42}) {
		t.Fatalf("connections = %+v, %v; want 5 active, 42 accepted", c, err)
	}
	if _, err := drain.ReadConnections(strings.NewReader("listener.x.downstream_cx_active: lots\n")); err == nil {
		t.Fatal("accepted a non-number")
	}
}

// TestSupervisorDrainsBeforeStopping runs a stand-in child process (sleep)
// and checks that it is signalled only after the drain finished.
func TestSupervisorDrainsBeforeStopping(t *testing.T) {
	a := &adminStandIn{active: 4}
	srv := httptest.NewServer(a)
	defer srv.Close()
	cmd := exec.Command("sleep", "60")
	sup := &drain.Supervisor{Cmd: cmd, Drainer: drainer(srv.URL, 5*time.Second), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), StopGrace: 2 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	time.Sleep(100 * time.Millisecond)
	if cmd.ProcessState != nil {
		t.Fatal("child exited early")
	}
	cancel() // SIGTERM reached the wrapper
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("supervisor did not stop")
	}
	a.mu.Lock()
	left := a.active
	a.mu.Unlock()
	if left != 0 {
		t.Fatalf("child stopped with %d connections still active", left)
	}
	if ws := cmd.ProcessState.String(); !strings.Contains(ws, "terminated") {
		t.Fatalf("child state %q; want terminated by SIGTERM", ws)
	}
}

// FuzzReadConnections: Envoy's stats text is outside input; the parser
// never panics and never reports a negative sum from well-formed gauges.
func FuzzReadConnections(f *testing.F) {
	f.Add("listener.0.0.0.0_80.downstream_cx_active: 4\nlistener.admin.downstream_cx_active: 2\n")
	f.Add("listener.x.downstream_cx_active: -1\nlistener.x.downstream_cx_total: 3\n")
	f.Add("garbage\n: \nlistener..downstream_cx_active: 99999999999999999999\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := drain.ReadConnections(strings.NewReader(in))
		if err == nil && (c.Active < 0 || c.Accepted < 0) && !strings.Contains(in, "-") {
			t.Fatalf("negative sum %+v from %q", c, in)
		}
	})
}
