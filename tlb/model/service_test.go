package model

import (
	"net/netip"
	"slices"
	"testing"
)

func TestWithDefaults(t *testing.T) {
	tests := map[string]struct {
		in        Service
		wantSched Scheduler
		wantFlags []Flag
	}{
		"empty gets mh with fallback and port": {in: Service{}, wantSched: Maglev, wantFlags: []Flag{MHFallback, MHPort}},
		"explicit empty flags stay empty":      {in: Service{Flags: []Flag{}}, wantSched: Maglev, wantFlags: []Flag{}},
		"wrr gets no flags":                    {in: Service{Scheduler: WeightedRoundRobin}, wantSched: WeightedRoundRobin, wantFlags: []Flag{}},
		"explicit flags kept":                  {in: Service{Flags: []Flag{MHPort}}, wantSched: Maglev, wantFlags: []Flag{MHPort}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := tc.in.WithDefaults()
			if got.Scheduler != tc.wantSched {
				t.Errorf("scheduler = %q; want %q", got.Scheduler, tc.wantSched)
			}
			if !slices.Equal(got.Flags, tc.wantFlags) || got.Flags == nil {
				t.Errorf("flags = %#v; want %#v", got.Flags, tc.wantFlags)
			}
		})
	}
}

func TestCanonicalIsIndependentOfInputOrder(t *testing.T) {
	a := svc("203.0.113.10", 80, rs("198.18.2.10", 1), rs("198.18.2.2", 1), rs("198.18.2.9", 0))
	b := svc("203.0.113.10", 80, rs("198.18.2.9", 0), rs("198.18.2.10", 1), rs("198.18.2.2", 1))
	want := []RealServer{rs("198.18.2.2", 1), rs("198.18.2.9", 0), rs("198.18.2.10", 1)}
	if got := a.Canonical(); !slices.Equal(got, want) {
		t.Errorf("Canonical(a) = %v; want %v", got, want)
	}
	if got := b.Canonical(); !slices.Equal(got, want) {
		t.Errorf("Canonical(b) = %v; want %v", got, want)
	}
	if a.RealServers[0].Addr != netip.MustParseAddr("198.18.2.10") {
		t.Error("Canonical changed its input")
	}
}

func TestFlagBitsRoundTrip(t *testing.T) {
	bits := FlagBits([]Flag{MHFallback, MHPort})
	if bits != SvcFlagSched1|SvcFlagSched2 {
		t.Fatalf("FlagBits = %#x; want %#x", bits, SvcFlagSched1|SvcFlagSched2)
	}
	if got := FlagNames(Maglev, bits); !slices.Equal(got, []Flag{MHFallback, MHPort}) {
		t.Errorf("FlagNames(mh) = %v", got)
	}
	if got := FlagNames(SourceHashing, SvcFlagSched2); !slices.Equal(got, []Flag{SHPort}) {
		t.Errorf("FlagNames(sh) = %v", got)
	}
	if got := FlagNames(WeightedRoundRobin, bits); len(got) != 0 {
		t.Errorf("FlagNames(wrr) = %v; want none", got)
	}
}

func TestKeyString(t *testing.T) {
	k := Key{VIP: netip.MustParseAddr("2001:db8::1"), Protocol: UDP, Port: 53}
	if got, want := k.String(), "[2001:db8::1]:53/udp"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}
