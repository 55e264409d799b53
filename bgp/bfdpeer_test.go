package bgp

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tlbproject/tlb/bgp/bfd"
)

// switchCalls records what bfdPeers asks of GoBGP.
type switchCalls chan string

func (c switchCalls) DisablePeer(_ context.Context, r *api.DisablePeerRequest) error {
	c <- "disable " + r.Address
	return nil
}

func (c switchCalls) EnablePeer(_ context.Context, r *api.EnablePeerRequest) error {
	c <- "enable " + r.Address
	return nil
}

// TestBFDDownShutsThePeerUntilUp: a BFD session that was Up going Down
// shuts the BGP peer; Up again reopens it; Down before ever Up, and Up
// while open, ask nothing. The metrics follow every change.
func TestBFDDownShutsThePeerUntilUp(t *testing.T) {
	reg := prometheus.NewRegistry()
	b, err := newBFDPeers(slog.New(slog.NewTextHandler(io.Discard, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	calls := make(switchCalls, 4)
	gate := make(chan bool, 1)
	ctx, cancel := context.WithCancel(context.Background())
	b.wg.Add(1)
	go b.follow(ctx, calls, "198.18.0.1", gate)
	defer func() { cancel(); b.wg.Wait() }()

	expect := func(want string) {
		t.Helper()
		select {
		case got := <-calls:
			if got != want {
				t.Fatalf("gobgp asked to %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("gobgp never asked to %q", want)
		}
	}
	const peer = "198.18.0.1"
	b.changed(peer, bfd.Transition{From: bfd.Down, To: bfd.Init}, gate)
	b.changed(peer, bfd.Transition{From: bfd.Init, To: bfd.Up}, gate)
	b.changed(peer, bfd.Transition{From: bfd.Up, To: bfd.Down, Diag: bfd.DiagDetectionTimeExpired}, gate)
	expect("disable " + peer)
	if got := testutil.ToFloat64(b.state.WithLabelValues(peer, "down")); got != 1 {
		t.Errorf("state down gauge %v, want 1", got)
	}
	b.changed(peer, bfd.Transition{From: bfd.Down, To: bfd.Up}, gate)
	expect("enable " + peer)
	if got := testutil.ToFloat64(b.transitions.WithLabelValues(peer)); got != 4 {
		t.Errorf("transitions %v, want 4", got)
	}
	if got := testutil.ToFloat64(b.state.WithLabelValues(peer, "up")); got != 1 {
		t.Errorf("state up gauge %v, want 1", got)
	}
	select {
	case extra := <-calls:
		t.Errorf("unexpected gobgp call %q", extra)
	default:
	}
}
