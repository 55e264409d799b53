package bgp

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/prometheus/client_golang/prometheus"
)

func TestAnnounceAppliesDiffToPeer(t *testing.T) {
	r := newReceiver(t)
	reg := prometheus.NewRegistry()
	s, err := NewSpeaker(testConfig(r), testLogger(t), reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	waitEstablished(t, s)
	if got := value(t, s.metrics.sessionUp.WithLabelValues(receiverAddr)); got != 1 {
		t.Errorf("tlb_bgp_session_established{peer=%s} = %v, want 1", receiverAddr, got)
	}
	ctx := context.Background()

	steps := []struct {
		name    string
		desired []string
		want    map[string]string
	}{
		{"first subnet", []string{"203.0.113.0/24"}, map[string]string{"203.0.113.0/24": speakerAddr}},
		{"add /32 and second range", []string{"203.0.113.0/24", "203.0.113.10/32", "198.51.100.0/25"},
			map[string]string{"203.0.113.0/24": speakerAddr, "203.0.113.10/32": speakerAddr, "198.51.100.0/25": speakerAddr}},
		{"swap", []string{"203.0.113.10/32", "203.0.113.11/32"},
			map[string]string{"203.0.113.10/32": speakerAddr, "203.0.113.11/32": speakerAddr}},
		{"duplicates collapse", []string{"203.0.113.11/32", "203.0.113.11/32"}, map[string]string{"203.0.113.11/32": speakerAddr}},
		{"empty withdraws all", nil, map[string]string{}},
	}
	for _, st := range steps {
		if err := s.Announce(ctx, prefixes(st.desired...)); err != nil {
			t.Fatalf("%s: announce: %v", st.name, err)
		}
		r.waitRoutes(t, st.want)
		if got := value(t, s.metrics.announced); int(got) != len(st.want) {
			t.Errorf("%s: tlb_bgp_announced_prefixes = %v, want %d", st.name, got, len(st.want))
		}
	}
}

func TestAnnounceRefusesOutsideAllowedRanges(t *testing.T) {
	r := newReceiver(t)
	s := startSpeaker(t, testConfig(r))
	ctx := context.Background()
	if err := s.Announce(ctx, prefixes("203.0.113.0/24")); err != nil {
		t.Fatal(err)
	}
	r.waitRoutes(t, map[string]string{"203.0.113.0/24": speakerAddr})

	cases := map[string][]string{
		"foreign subnet":        {"203.0.113.0/24", "192.0.2.0/24"},
		"wider than allowed":    {"203.0.112.0/23"},
		"second range too wide": {"198.51.100.0/24"},
		"default route":         {"0.0.0.0/0"},
		"ipv6":                  {"2001:db8::/64"},
	}
	for name, desired := range cases {
		err := s.Announce(ctx, prefixes(desired...))
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("%s: Announce(%v) error = %v, want ErrNotAllowed", name, desired, err)
		}
	}
	if got := strs(s.Announced()); !slices.Equal(got, []string{"203.0.113.0/24"}) {
		t.Errorf("announced after refusals = %v, want the last good set", got)
	}
	if got := value(t, s.metrics.announceError.WithLabelValues("refused")); got != float64(len(cases)) {
		t.Errorf("refused counter = %v, want %d", got, len(cases))
	}
	// A later, allowed change proves the session stayed up and nothing
	// refused reached the peer in between (updates arrive in order).
	if err := s.Announce(ctx, prefixes("203.0.113.0/24", "203.0.113.99/32")); err != nil {
		t.Fatal(err)
	}
	r.waitRoutes(t, map[string]string{"203.0.113.0/24": speakerAddr, "203.0.113.99/32": speakerAddr})
}

// TestExportPolicyBlocksForeignPaths bypasses Announce's check and adds a
// foreign path straight into GoBGP: the export policy must still stop it.
func TestExportPolicyBlocksForeignPaths(t *testing.T) {
	r := newReceiver(t)
	s := startSpeaker(t, testConfig(r))
	ctx := context.Background()
	path, err := s.apiPath(prefixes("192.0.2.0/24")[0], routeAttrs{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.srv.AddPath(ctx, &api.AddPathRequest{TableType: api.TableType_GLOBAL, Path: path}); err != nil {
		t.Fatalf("add foreign path directly: %v", err)
	}
	// Sentinel: an allowed prefix sent afterwards. Once it arrives, the
	// foreign one would have arrived too had it been exported.
	if err := s.Announce(ctx, prefixes("203.0.113.7/32")); err != nil {
		t.Fatal(err)
	}
	r.waitRoutes(t, map[string]string{"203.0.113.7/32": speakerAddr})
}

// TestImportRejectsPeerRoutes: routes the router sends reach adj-rib-in
// but never the speaker's table.
func TestImportRejectsPeerRoutes(t *testing.T) {
	r := newReceiver(t)
	s := startSpeaker(t, testConfig(r))
	ctx := context.Background()
	r.announce(t, "10.99.0.0/16")
	r.announce(t, "203.0.113.0/24") // even inside our own VIP range

	deadline := time.Now().Add(10 * time.Second)
	adjIn := 0
	for time.Now().Before(deadline) && adjIn < 2 {
		adjIn = 0
		err := s.srv.ListPath(ctx, &api.ListPathRequest{TableType: api.TableType_ADJ_IN, Name: receiverAddr, Family: ipv4Unicast()},
			func(*api.Destination) { adjIn++ })
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if adjIn != 2 {
		t.Fatalf("speaker adj-rib-in has %d routes, want the 2 the router sent", adjIn)
	}
	var global []string
	err := s.srv.ListPath(ctx, &api.ListPathRequest{TableType: api.TableType_GLOBAL, Family: ipv4Unicast()},
		func(d *api.Destination) { global = append(global, d.Prefix) })
	if err != nil {
		t.Fatal(err)
	}
	if len(global) != 0 {
		t.Errorf("speaker imported %v, want nothing", global)
	}
}

func TestConfiguredNextHop(t *testing.T) {
	r := newReceiver(t)
	cfg := testConfig(r)
	cfg.NextHop = "198.18.0.42"
	s := startSpeaker(t, cfg)
	if err := s.Announce(context.Background(), prefixes("203.0.113.0/24")); err != nil {
		t.Fatal(err)
	}
	r.waitRoutes(t, map[string]string{"203.0.113.0/24": "198.18.0.42"})
}

func TestStopWithdraws(t *testing.T) {
	r := newReceiver(t)
	s := startSpeaker(t, testConfig(r))
	ctx := context.Background()
	if err := s.Announce(ctx, prefixes("203.0.113.0/24")); err != nil {
		t.Fatal(err)
	}
	r.waitRoutes(t, map[string]string{"203.0.113.0/24": speakerAddr})
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	r.waitRoutes(t, map[string]string{})
	if s.Established() {
		t.Error("Established() = true after Stop")
	}
	if err := s.Announce(ctx, prefixes("203.0.113.0/24")); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Announce after Stop: error = %v, want ErrNotStarted", err)
	}
}

// faultyPaths fails the Nth AddPath or DeletePath call (1-based; 0 never).
type faultyPaths struct {
	pathTable
	failAdd, failDelete int
	adds, deletes       int
}

func (f *faultyPaths) AddPath(ctx context.Context, r *api.AddPathRequest) (*api.AddPathResponse, error) {
	f.adds++
	if f.adds == f.failAdd {
		return nil, errors.New("injected add failure")
	}
	return f.pathTable.AddPath(ctx, r)
}

func (f *faultyPaths) DeletePath(ctx context.Context, r *api.DeletePathRequest) error {
	f.deletes++
	if f.deletes == f.failDelete {
		return errors.New("injected delete failure")
	}
	return f.pathTable.DeletePath(ctx, r)
}

func TestAnnounceRollsBackHalfAppliedChange(t *testing.T) {
	before := []string{"203.0.113.1/32", "203.0.113.2/32"}
	after := []string{"203.0.113.2/32", "203.0.113.3/32", "203.0.113.4/32", "203.0.113.5/32"}
	cases := map[string]struct{ failAdd, failDelete int }{
		"third add fails": {failAdd: 3},
		"first add fails": {failAdd: 1},
		"withdraw fails":  {failDelete: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newReceiver(t)
			s := startSpeaker(t, testConfig(r))
			ctx := context.Background()
			if err := s.Announce(ctx, prefixes(before...)); err != nil {
				t.Fatal(err)
			}
			wantBefore := map[string]string{}
			for _, p := range before {
				wantBefore[p] = speakerAddr
			}
			r.waitRoutes(t, wantBefore)

			s.paths = &faultyPaths{pathTable: s.srv, failAdd: tc.failAdd, failDelete: tc.failDelete}
			if err := s.Announce(ctx, prefixes(after...)); err == nil {
				t.Fatal("Announce with an injected failure returned nil")
			}
			if got := strs(s.Announced()); !slices.Equal(got, before) {
				t.Errorf("announced after rollback = %v, want %v", got, before)
			}
			if got := value(t, s.metrics.announceError.WithLabelValues("apply")); got != 1 {
				t.Errorf("apply error counter = %v, want 1", got)
			}
			// Sentinel change through the healthy path: when it arrives,
			// anything the failed call leaked would be visible too.
			s.paths = s.srv
			if err := s.Announce(ctx, prefixes(append(before, "203.0.113.200/32")...)); err != nil {
				t.Fatal(err)
			}
			wantBefore["203.0.113.200/32"] = speakerAddr
			r.waitRoutes(t, wantBefore)
		})
	}
}
