package bgp

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// sample returns the value of the series name{labels} in reg, and whether
// it is there.
func sample(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue series
				}
			}
			if m.Gauge != nil {
				return m.Gauge.GetValue(), true
			}
			return m.Counter.GetValue(), true
		}
	}
	return 0, false
}

func TestPeerMetricsFollowTheSession(t *testing.T) {
	r := newReceiver(t)
	reg := prometheus.NewPedanticRegistry()
	s, err := NewSpeaker(testConfig(r), testLogger(t), reg)
	if err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(1_000)
	s.now = func() time.Time { return time.Unix(clock.Load(), 0) }
	peer := map[string]string{"peer": receiverAddr}
	state := func(st string) map[string]string { return map[string]string{"peer": receiverAddr, "state": st} }

	if _, ok := sample(t, reg, "tlb_bgp_session_state", peer); ok {
		t.Fatal("session state reported before the peer is added")
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	waitEstablished(t, s)
	for _, st := range sessionStates {
		want := 0.0
		if st == "established" {
			want = 1
		}
		if got, _ := sample(t, reg, "tlb_bgp_session_state", state(st)); got != want {
			t.Errorf("tlb_bgp_session_state{state=%q} = %v, want %v", st, got, want)
		}
	}
	if got, _ := sample(t, reg, "tlb_bgp_session_last_change_timestamp_seconds", peer); got != 1000 {
		t.Errorf("last change = %v, want 1000 (the clock when the session came up)", got)
	}
	if got, ok := sample(t, reg, "tlb_bgp_peer_advertised_prefixes", peer); !ok || got != 0 {
		t.Errorf("advertised before any announce = %v (present %v), want 0", got, ok)
	}

	ctx := context.Background()
	if err := s.Announce(ctx, prefixes("203.0.113.10/32", "203.0.113.11/32")); err != nil {
		t.Fatal(err)
	}
	r.waitRoutes(t, map[string]string{"203.0.113.10/32": speakerAddr, "203.0.113.11/32": speakerAddr})
	if got, _ := sample(t, reg, "tlb_bgp_peer_advertised_prefixes", peer); got != 2 {
		t.Errorf("advertised after announcing 2 prefixes (GoBGP's count) = %v, want 2", got)
	}

	// The router goes away: the session leaves established, at the new time.
	clock.Store(2_000)
	r.srv.Stop()
	deadline := time.Now().Add(15 * time.Second)
	for s.Established() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got, _ := sample(t, reg, "tlb_bgp_session_state", state("established")); got != 0 {
		t.Fatalf("tlb_bgp_session_state{state=established} = %v after the router stopped, want 0", got)
	}
	if got, _ := sample(t, reg, "tlb_bgp_session_last_change_timestamp_seconds", peer); got != 2000 {
		t.Errorf("last change = %v, want 2000 (the clock when the session dropped)", got)
	}
	sum := 0.0
	for _, st := range sessionStates {
		v, _ := sample(t, reg, "tlb_bgp_session_state", state(st))
		sum += v
	}
	if sum != 1 {
		t.Errorf("the states of one peer sum to %v, want exactly one state at 1", sum)
	}

	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := sample(t, reg, "tlb_bgp_peer_advertised_prefixes", peer); got != 0 {
		t.Errorf("advertised after Stop = %v, want 0", got)
	}
	if got, _ := sample(t, reg, "tlb_bgp_session_state", state("idle")); got != 1 {
		t.Errorf("tlb_bgp_session_state{state=idle} after Stop = %v, want 1", got)
	}
}
