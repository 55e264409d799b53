package agent

import (
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tlbproject/tlb/netd"
	"github.com/tlbproject/tlb/netd/model"
)

// scriptedReconciler returns the next result and error for each call.
type scriptedReconciler struct {
	results []netd.Result
	errs    []error
}

func (s *scriptedReconciler) Reconcile(model.Gateway) (netd.Result, error) {
	res, err := s.results[0], s.errs[0]
	s.results, s.errs = s.results[1:], s.errs[1:]
	return res, err
}

func TestVIPBoundFollowsReconciles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netd.yaml")
	rec := &scriptedReconciler{}
	reg := prometheus.NewPedanticRegistry()
	a := New(path, rec, NewMetrics(reg), slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	failed := errors.New("netlink: injected")
	header := "# HELP netd_vip_bound 1 while the VIP is bound on the tunnel (last reconcile succeeded, or it was bound before one that failed), 0 if it may not be.\n# TYPE netd_vip_bound gauge\n"

	steps := []struct {
		name   string
		vips   string
		result netd.Result
		err    error
		want   string
	}{
		{"first success binds every VIP", "[203.0.113.10, 203.0.113.11]", netd.Result{}, nil,
			`netd_vip_bound{vip="203.0.113.10"} 1
netd_vip_bound{vip="203.0.113.11"} 1
`},
		{"failure while binding a new VIP: it is 0, the others keep 1",
			"[203.0.113.11, 203.0.113.12]",
			netd.Result{Plan: netd.Plan{AddVIPs: []netip.Addr{netip.MustParseAddr("203.0.113.12")}}}, failed,
			`netd_vip_bound{vip="203.0.113.10"} 1
netd_vip_bound{vip="203.0.113.11"} 1
netd_vip_bound{vip="203.0.113.12"} 0
`},
		{"success: the VIP left out of the model goes", "[203.0.113.11, 203.0.113.12]", netd.Result{}, nil,
			`netd_vip_bound{vip="203.0.113.11"} 1
netd_vip_bound{vip="203.0.113.12"} 1
`},
		{"failure before any plan: a new VIP is 0", "[203.0.113.11, 203.0.113.12, 203.0.113.13]", netd.Result{}, failed,
			`netd_vip_bound{vip="203.0.113.11"} 1
netd_vip_bound{vip="203.0.113.12"} 1
netd_vip_bound{vip="203.0.113.13"} 0
`},
	}
	for _, st := range steps {
		write(t, path, "vips: "+st.vips+"\n")
		if err := a.Load(); err != nil {
			t.Fatalf("%s: load: %v", st.name, err)
		}
		rec.results, rec.errs = []netd.Result{st.result}, []error{st.err}
		if _, err := a.Reconcile(); !errors.Is(err, st.err) {
			t.Fatalf("%s: reconcile error %v, want %v", st.name, err, st.err)
		}
		if err := testutil.GatherAndCompare(reg, strings.NewReader(header+st.want), "netd_vip_bound"); err != nil {
			t.Errorf("%s: %v", st.name, err)
		}
	}
}
