package model

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestValidateL7(t *testing.T) {
	web := svc("203.0.113.10", 443, rs("198.18.2.2", 1))
	ap := netip.MustParseAddrPort
	tests := map[string]struct {
		l7   []L7Service
		want []string // substrings, one per expected FieldError, in order
	}{
		"source state":       {l7: []L7Service{{VIP: web.VIP, Name: "team/web", ReadyBackends: 3}}},
		"probed":             {l7: []L7Service{{VIP: web.VIP, Name: "a", Probe: &L7Probe{Backends: []netip.AddrPort{ap("198.51.100.20:8080")}, Path: "/healthz", Status: 204}}}},
		"no ready yet":       {l7: []L7Service{{VIP: web.VIP, Name: "team/web"}}},
		"unknown VIP":        {l7: []L7Service{{VIP: netip.MustParseAddr("203.0.113.99"), Name: "x"}}, want: []string{"l7[0] (x): vip: 203.0.113.99 is the VIP of no service"}},
		"missing name":       {l7: []L7Service{{VIP: web.VIP}}, want: []string{"l7[0] (): name: required"}},
		"duplicate":          {l7: []L7Service{{VIP: web.VIP, Name: "a"}, {VIP: web.VIP, Name: "a"}}, want: []string{"l7[1] (a): name: duplicate of l7[0]"}},
		"negative":           {l7: []L7Service{{VIP: web.VIP, Name: "a", ReadyBackends: -1}}, want: []string{"readyBackends: must not be negative"}},
		"probe, no backends": {l7: []L7Service{{VIP: web.VIP, Name: "a", Probe: &L7Probe{}}}, want: []string{"probe.backends: at least one backend"}},
		"probe errors": {
			l7: []L7Service{{VIP: web.VIP, Name: "a", ReadyBackends: 1, Probe: &L7Probe{
				Backends: []netip.AddrPort{ap("198.51.100.20:0"), ap("0.0.0.0:80"), ap("198.51.100.21:80"), ap("198.51.100.21:80")},
				Path:     "healthz", Status: 700}}},
			want: []string{
				"readyBackends: must be 0 with a probe",
				"probe.backends[0]: 198.51.100.20:0 has no port",
				"probe.backends[1]: 0.0.0.0:80 is not a unicast",
				"probe.backends[3]: 198.51.100.21:80 is a duplicate of probe.backends[2]",
				`probe.path: "healthz" is not an absolute URL path`,
				"probe.status: 700 is not an HTTP status",
			},
		},
		"status without path": {l7: []L7Service{{VIP: web.VIP, Name: "a", Probe: &L7Probe{Backends: []netip.AddrPort{ap("198.51.100.20:80")}, Status: 200}}},
			want: []string{"probe.status: only applies with probe.path"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fes := FieldErrors(Desired{Services: []Service{web}, L7: tc.l7}.Validate())
			if len(fes) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d", len(fes), fes, len(tc.want))
			}
			for i, fe := range fes {
				if fe.List != ListL7 || !strings.Contains(fe.Error(), tc.want[i]) {
					t.Errorf("error %d = %q (list %q), want l7 containing %q", i, fe, fe.List, tc.want[i])
				}
			}
		})
	}
}

func TestSortedL7IsADeepSortedCopy(t *testing.T) {
	a, b := netip.MustParseAddr("203.0.113.20"), netip.MustParseAddr("203.0.113.10")
	p := &L7Probe{Backends: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.9:80"), netip.MustParseAddrPort("198.51.100.1:80")}}
	d := Desired{L7: []L7Service{{VIP: a, Name: "z"}, {VIP: b, Name: "y", Probe: p}, {VIP: b, Name: "x"}}}
	got := d.Sorted().L7
	want := []L7Service{{VIP: b, Name: "x"}, {VIP: b, Name: "y", Probe: &L7Probe{Backends: []netip.AddrPort{p.Backends[1], p.Backends[0]}}}, {VIP: a, Name: "z"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Sorted().L7 = %+v, want %+v", got, want)
	}
	if p.Backends[0].Addr() != netip.MustParseAddr("198.51.100.9") {
		t.Error("Sorted changed the probe of its input")
	}
	if (Desired{}).Sorted().L7 != nil {
		t.Error("Sorted of no L7 services is not nil (models from two sources would differ)")
	}
}
