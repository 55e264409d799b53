//go:build !lab

package bgp_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/bgp/birdlab"
)

const (
	routerASN   = 64500
	directorASN = 64512
	vipSubnet   = "203.0.113.0/24"
)

func logger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tlog struct{ t *testing.T }

func (w tlog) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }

// neighbors returns the router-side sessions for the first n directors.
func neighbors(l *birdlab.Lab, n int) []birdlab.Neighbor {
	var out []birdlab.Neighbor
	for i := range n {
		out = append(out, birdlab.Neighbor{Name: director(i), Address: l.DirectorAddrs[i], ASN: directorASN})
	}
	return out
}

func director(i int) string { return "director" + string(rune('0'+i)) }

func startRouter(t *testing.T, l *birdlab.Lab, nbrs []birdlab.Neighbor) *birdlab.Router {
	t.Helper()
	return birdlab.StartForTest(t, l.Router, birdlab.RouterConfig{RouterID: l.RouterAddr, ASN: routerASN, Neighbors: nbrs})
}

// speakerConfig is director i's config, peering with the lab router.
func speakerConfig(l *birdlab.Lab, i int) bgp.Config {
	return bgp.Config{
		LocalASN:        directorASN,
		RouterID:        l.DirectorAddrs[i],
		AllowedPrefixes: []string{vipSubnet},
		Peers: []bgp.PeerConfig{{
			Address: l.RouterAddr, ASN: routerASN, LocalAddress: l.DirectorAddrs[i],
			HoldTimeSeconds: 3, KeepaliveSeconds: 1,
		}},
	}
}

func startSpeaker(t *testing.T, cfg bgp.Config) *bgp.Speaker {
	t.Helper()
	s, err := bgp.NewSpeaker(cfg, logger(t), prometheus.NewRegistry())
	if err != nil {
		t.Fatalf("new speaker: %v", err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("start speaker: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s
}

func waitEstablished(t *testing.T, r *birdlab.Router, name string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	state := ""
	for time.Now().Before(deadline) {
		st, err := r.ProtocolState(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if state = st; st == "Established" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("bird session %s is %q after %v, want Established", name, state, within)
}

// none matches an empty route list.
func none(rs []birdlab.Route) bool { return len(rs) == 0 }

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
