package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tlbproject/tlb/netd"
	"github.com/tlbproject/tlb/netd/model"
)

type recordingReconciler struct {
	got  []model.Gateway
	fail error
}

func (r *recordingReconciler) Reconcile(d model.Gateway) (netd.Result, error) {
	r.got = append(r.got, d)
	return netd.Result{Writes: 1}, r.fail
}

// write replaces the file atomically, as a ConfigMap update does.
func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func TestInvalidConfigKeepsLastValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netd.yaml")
	rec := &recordingReconciler{}
	m := NewMetrics(prometheus.NewRegistry())
	a := New(path, rec, m, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)

	write(t, path, "vips: [203.0.113.10]\n")
	if err := a.Load(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reconcile(); err != nil {
		t.Fatal(err)
	}

	for name, bad := range map[string]string{
		"unknown field":  "vips: [203.0.113.11]\nextra: 1\n",
		"bad vip":        "vips: [203.0.113.300]\n",
		"tunnel changed": "netd: {tunnel: tun1}\nvips: [203.0.113.11]\n",
	} {
		write(t, path, bad)
		if err := a.Load(); err == nil {
			t.Fatalf("%s: Load accepted %q", name, bad)
		}
	}
	if got := value(t, m.ConfigErrors); got != 3 {
		t.Fatalf("config errors = %v, want 3", got)
	}
	if _, err := a.Reconcile(); err != nil {
		t.Fatal(err)
	}
	last := rec.got[len(rec.got)-1]
	if len(last.VIPs) != 1 || last.VIPs[0] != netip.MustParseAddr("203.0.113.10") {
		t.Fatalf("reconciled %v after invalid files, want the last valid VIP 203.0.113.10", last.VIPs)
	}
	if got := value(t, m.VIPsBound); got != 1 {
		t.Fatalf("netd_vips_bound = %v, want 1", got)
	}
}

func TestReconcileErrorIsCountedAndWrapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netd.yaml")
	write(t, path, "vips: [203.0.113.10]\n")
	boom := errors.New("boom")
	m := NewMetrics(prometheus.NewRegistry())
	a := New(path, &recordingReconciler{fail: boom}, m, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	if _, err := a.Reconcile(); err == nil || !strings.Contains(err.Error(), "no valid netd config") {
		t.Fatalf("Reconcile before Load: err = %v", err)
	}
	if err := a.Load(); err != nil {
		t.Fatal(err)
	}
	_, err := a.Reconcile()
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "tunl0") {
		t.Fatalf("err = %v, want boom wrapped with the tunnel name", err)
	}
	if got := value(t, m.ReconcileErrors); got != 1 {
		t.Fatalf("reconcile errors = %v, want 1", got)
	}
}

func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	t.Fatalf("metric %v is neither counter nor gauge", m.Desc())
	return 0
}

func TestRunReloadsOnChangeAndKeepsRunningOnBadFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netd.yaml")
	write(t, path, "vips: [203.0.113.10]\n")
	rec := &recordingReconciler{}
	a := New(path, rec, NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	if err := a.Load(); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{})
	readies := make(chan bool, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		a.Run(ctx, changed, time.Hour, func(ok bool, _ string) { readies <- ok })
		close(done)
	}()

	write(t, path, "vips: [nope]\n")
	changed <- struct{}{} // rejected: no reconcile, loop continues
	write(t, path, "vips: [203.0.113.10, 203.0.113.11]\n")
	changed <- struct{}{}
	if ok := <-readies; !ok {
		t.Fatal("reconcile after a valid change reported not ready")
	}
	cancel()
	<-done
	if len(rec.got) == 0 {
		t.Fatal("no reconcile after a valid change")
	}
	for _, g := range rec.got {
		if len(g.VIPs) != 2 {
			t.Fatalf("reconciled %v, want only the two VIPs of the valid file", rec.got)
		}
	}
}
