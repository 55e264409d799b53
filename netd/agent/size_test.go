package agent

import (
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/netd/config"
)

// TestConfigOverSizeCapKeepsLastValid: a file over config.MaxFileSize is
// refused, counted, and the last valid VIPs stay bound.
func TestConfigOverSizeCapKeepsLastValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netd.yaml")
	rec := &recordingReconciler{}
	m := NewMetrics(prometheus.NewRegistry())
	a := New(path, rec, m, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	write(t, path, "vips: [203.0.113.10]\n")
	if err := a.Load(); err != nil {
		t.Fatal(err)
	}

	big := "vips: [203.0.113.11]\n#" + strings.Repeat("x", config.MaxFileSize) + "\n"
	write(t, path, big)
	err := a.Load()
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "size cap") {
		t.Fatalf("Load err = %v; want the size cap naming %s", err, path)
	}
	if got := value(t, m.ConfigErrors); got != 1 {
		t.Errorf("config errors = %v; want 1", got)
	}
	if _, err := a.Reconcile(); err != nil {
		t.Fatal(err)
	}
	last := rec.got[len(rec.got)-1]
	if len(last.VIPs) != 1 || last.VIPs[0] != netip.MustParseAddr("203.0.113.10") {
		t.Errorf("reconciled %v after an oversized file; want the last valid VIP 203.0.113.10", last.VIPs)
	}
}
