package agent

import (
	"net/netip"
	"reflect"
	"slices"
	"testing"

	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

var (
	vipA     = netip.MustParseAddr("203.0.113.10")
	vipB     = netip.MustParseAddr("203.0.113.20")
	backend1 = netip.MustParseAddrPort("198.51.100.20:8080")
	backend2 = netip.MustParseAddrPort("198.51.100.21:8080")
)

func TestL7Table(t *testing.T) {
	probe := &model.L7Probe{Backends: []netip.AddrPort{backend1, backend2}, Path: "/healthz"}
	t1, t2 := health.Target{Addr: backend1, Path: "/healthz"}, health.Target{Addr: backend2, Path: "/healthz"}
	tests := map[string]struct {
		l7     []model.L7Service
		states map[health.Target]health.State
		want   health.L7Table
	}{
		"no L7 services": {want: nil},
		"source-reported backends are taken as they are": {
			l7:   []model.L7Service{{VIP: vipA, Name: "team/web", ReadyBackends: 2}, {VIP: vipA, Name: "team/api"}},
			want: health.L7Table{vipA: {{Name: "team/web", Ready: 2}, {Name: "team/api", Ready: 0}}},
		},
		"probed backends count while Up": {
			l7:     []model.L7Service{{VIP: vipA, Name: "a", Probe: probe}},
			states: map[health.Target]health.State{t1: health.Up, t2: health.Down},
			want:   health.L7Table{vipA: {{Name: "a", Ready: 1}}},
		},
		"not yet probed is not ready": {
			l7:   []model.L7Service{{VIP: vipA, Name: "a", Probe: probe}, {VIP: vipB, Name: "b", ReadyBackends: 1}},
			want: health.L7Table{vipA: {{Name: "a", Ready: 0}}, vipB: {{Name: "b", Ready: 1}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := L7Table(model.Desired{L7: tc.l7}, func(t health.Target) health.State { return tc.states[t] })
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("L7Table = %+v, want %+v", got, tc.want)
			}
		})
	}
	d := model.Desired{L7: []model.L7Service{{VIP: vipB, Name: "b", Probe: &model.L7Probe{Backends: []netip.AddrPort{backend2, backend1}}},
		{VIP: vipA, Name: "a", Probe: probe}, {VIP: vipA, Name: "k8s", ReadyBackends: 4}}}
	want := []health.Target{{Addr: backend1}, t1, {Addr: backend2}, t2}
	if got := L7Targets(d); !slices.Equal(got, want) {
		t.Errorf("L7Targets = %v, want %v (sorted, each once, only probed services)", got, want)
	}
}

// withL7 is twoVIPs with one probed L7 service on 203.0.113.10.
func withL7() model.Desired {
	d := twoVIPs()
	d.L7 = []model.L7Service{{VIP: vipA, Name: "203.0.113.10:80/tcp", Probe: &model.L7Probe{Backends: []netip.AddrPort{backend1}}}}
	return d
}

// TestL7BackendsDecideThePerVIPRoute: in per-VIP mode the /32 of a VIP
// whose only L7 backend is down is withdrawn and GTM says why, while the
// other VIP stays announced, IPVS weights do not change and the director
// stays ready; the backend's return (a probe, or a new model from the
// source) brings the /32 back.
func TestL7BackendsDecideThePerVIPRoute(t *testing.T) {
	both := []netip.Prefix{netip.MustParsePrefix("203.0.113.10/32"), netip.MustParsePrefix("203.0.113.20/32")}
	onlyB := both[1:]
	tgt := health.Target{Addr: backend1}
	r := start(t, health.AnnounceVIPs, withL7(), map[string]health.State{rs1: health.Up, rs2: health.Up})
	if c := r.ann.next(t); !slices.Equal(c.prefixes, onlyB) {
		t.Fatalf("before the backend was probed announced %v, want %v", c.prefixes, onlyB)
	}
	if got := r.backend.probed(); !slices.Equal(got, []health.Target{tgt}) {
		t.Errorf("backend checker probes %v, want [%v]", got, tgt)
	}
	r.backend.set(tgt, health.Up)
	r.agent.BackendChanged(health.BackendChange{Target: tgt, State: health.Up})
	if c := r.ann.next(t); !slices.Equal(c.prefixes, both) {
		t.Fatalf("with the backend up announced %v, want %v", c.prefixes, both)
	}
	if l := r.gtm.line("203.0.113.10"); l != "203.0.113.10 up healthy=2 total=2 l7-backends=1/1 services" {
		t.Errorf("GTM = %q", l)
	}
	weights := weightsOf(r.prog.last())

	r.backend.set(tgt, health.Down)
	r.agent.BackendChanged(health.BackendChange{Target: tgt, State: health.Down})
	if c := r.ann.next(t); !slices.Equal(c.prefixes, onlyB) {
		t.Fatalf("with the backend down announced %v, want %v", c.prefixes, onlyB)
	}
	if l := r.gtm.line("203.0.113.10"); l != "203.0.113.10 down healthy=2 total=2 l7-backends=0/1 services: no L7 service of the VIP has a ready backend" {
		t.Errorf("GTM = %q", l)
	}
	if got := weightsOf(r.prog.last()); !mapsEqual(got, weights) {
		t.Errorf("weights changed to %v (were %v): L7 state must not touch IPVS", got, weights)
	}
	if ready, _ := r.ready.get(); !ready {
		t.Error("not ready because an application has no backend; readiness is about the director")
	}

	// The source now reports the backend state itself (Kubernetes mode).
	d := twoVIPs()
	d.L7 = []model.L7Service{{VIP: vipA, Name: "team/web", ReadyBackends: 1}}
	r.updates <- d
	if c := r.ann.next(t); !slices.Equal(c.prefixes, both) {
		t.Fatalf("with one ready backend reported announced %v, want %v", c.prefixes, both)
	}
	if len(r.backend.probed()) != 0 {
		t.Errorf("still probing %v after the probed service left the model", r.backend.probed())
	}
}
