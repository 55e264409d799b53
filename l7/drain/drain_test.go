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
	active   int
	draining bool
	stuck    bool // connections never close
}

func (a *adminStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, r.Method+" "+r.URL.RequestURI())
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/healthcheck/fail":
	case r.Method == http.MethodPost && r.URL.Path == "/drain_listeners" && r.URL.Query().Has("graceful"):
		a.draining = true
	case r.Method == http.MethodGet && r.URL.Path == "/stats":
		if a.draining && !a.stuck && a.active > 0 {
			a.active--
		}
		fmt.Fprintf(w, "listener.0.0.0.0_8080.downstream_cx_active: %d\nlistener.0.0.0.0_8443.downstream_cx_active: %d\nlistener.admin.downstream_cx_active: 1\nhttp.https-443.downstream_cx_active: 99\n", a.active/2, a.active-a.active/2)
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

func TestSumActive(t *testing.T) {
	in := "listener.0.0.0.0_80.downstream_cx_active: 4\nlistener.admin.downstream_cx_active: 2\ncluster.x.upstream_cx_active: 9\nlistener.[::]_443.downstream_cx_active: 1\n"
	n, err := drain.SumActive(strings.NewReader(in))
	if err != nil || n != 5 {
		t.Fatalf("sum = %d, %v; want 5", n, err)
	}
	if _, err := drain.SumActive(strings.NewReader("listener.x.downstream_cx_active: lots\n")); err == nil {
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

// FuzzSumActive: Envoy's stats text is outside input; the parser never
// panics and never reports a negative sum from well-formed gauges.
func FuzzSumActive(f *testing.F) {
	f.Add("listener.0.0.0.0_80.downstream_cx_active: 4\nlistener.admin.downstream_cx_active: 2\n")
	f.Add("listener.x.downstream_cx_active: -1\n")
	f.Add("garbage\n: \nlistener..downstream_cx_active: 99999999999999999999\n")
	f.Fuzz(func(t *testing.T, in string) {
		n, err := drain.SumActive(strings.NewReader(in))
		if err == nil && n < 0 && !strings.Contains(in, "-") {
			t.Fatalf("negative sum %d from %q", n, in)
		}
	})
}
