package director

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

func ap(s string) netip.AddrPort { return netip.AddrPortFrom(netip.MustParseAddr(s), 80) }

func ad(s string, w int) actualDest {
	return actualDest{Addr: ap(s), Weight: w, Fwd: ipvs.ConnFwdTunnel}
}

func mrs(s string, w int) model.RealServer {
	return model.RealServer{Addr: netip.MustParseAddr(s), Weight: w}
}

func addrsOf(rs []model.RealServer) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Addr.String())
	}
	return out
}

func addrPorts(as []netip.AddrPort) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.String())
	}
	return out
}

// In these cases the canonical order is .1 < .2 < .3 < .4 and the
// kernel list must end up .1, .2, .3, .4 (head first).
func TestPlanDestinations(t *testing.T) {
	key := model.Key{VIP: netip.MustParseAddr("203.0.113.10"), Protocol: model.TCP, Port: 80}
	w3 := []model.RealServer{mrs("198.18.0.1", 1), mrs("198.18.0.2", 1), mrs("198.18.0.3", 1)}
	tests := map[string]struct {
		actual     []actualDest
		wanted     []model.RealServer
		unordered  bool
		wantDelete []string
		wantUpdate []string
		wantAdd    []string
		wantKept   int
	}{
		"fresh adds back to front": {
			wanted:  w3,
			wantAdd: []string{"198.18.0.3", "198.18.0.2", "198.18.0.1"},
		},
		"canonical list is kept": {
			actual:   []actualDest{ad("198.18.0.1", 1), ad("198.18.0.2", 1), ad("198.18.0.3", 1)},
			wanted:   w3,
			wantKept: 3,
		},
		"weight change keeps position": {
			actual:     []actualDest{ad("198.18.0.1", 1), ad("198.18.0.2", 1), ad("198.18.0.3", 1)},
			wanted:     []model.RealServer{mrs("198.18.0.1", 1), mrs("198.18.0.2", 0), mrs("198.18.0.3", 1)},
			wantUpdate: []string{"198.18.0.2"},
			wantKept:   2,
		},
		"unwanted one is deleted and the rest keep order": {
			actual:     []actualDest{ad("198.18.0.1", 1), ad("198.18.0.9", 1), ad("198.18.0.2", 1), ad("198.18.0.3", 1)},
			wanted:     w3,
			wantDelete: []string{"198.18.0.9:80"},
			wantKept:   3,
		},
		"re-added server at the head is moved back": {
			actual:     []actualDest{ad("198.18.0.2", 1), ad("198.18.0.1", 1), ad("198.18.0.3", 1)},
			wanted:     w3,
			wantDelete: []string{"198.18.0.2:80", "198.18.0.1:80"},
			wantAdd:    []string{"198.18.0.2", "198.18.0.1"},
			wantKept:   1,
		},
		"new server sorting in the middle": {
			actual:     []actualDest{ad("198.18.0.1", 1), ad("198.18.0.3", 1)},
			wanted:     w3,
			wantDelete: []string{"198.18.0.1:80"},
			wantAdd:    []string{"198.18.0.2", "198.18.0.1"},
			wantKept:   1,
		},
		"new server sorting first is only added": {
			actual:   []actualDest{ad("198.18.0.2", 1), ad("198.18.0.3", 1)},
			wanted:   w3,
			wantAdd:  []string{"198.18.0.1"},
			wantKept: 2,
		},
		"new server sorting last rebuilds the list": {
			actual:     []actualDest{ad("198.18.0.1", 1), ad("198.18.0.2", 1)},
			wanted:     w3,
			wantDelete: []string{"198.18.0.1:80", "198.18.0.2:80"},
			wantAdd:    []string{"198.18.0.3", "198.18.0.2", "198.18.0.1"},
		},
		"wrong forwarding method is updated in place": {
			actual:     []actualDest{{Addr: ap("198.18.0.1"), Weight: 1, Fwd: ipvs.ConnFwdMasq}},
			wanted:     []model.RealServer{mrs("198.18.0.1", 1)},
			wantUpdate: []string{"198.18.0.1"},
		},
		"real server on another port is replaced": {
			actual:     []actualDest{{Addr: netip.MustParseAddrPort("198.18.0.1:8080"), Weight: 1, Fwd: ipvs.ConnFwdTunnel}},
			wanted:     []model.RealServer{mrs("198.18.0.1", 1)},
			wantDelete: []string{"198.18.0.1:8080"},
			wantAdd:    []string{"198.18.0.1"},
		},
		"all removed": {
			actual:     []actualDest{ad("198.18.0.1", 1), ad("198.18.0.2", 1)},
			wantDelete: []string{"198.18.0.1:80", "198.18.0.2:80"},
		},
		"unordered scheduler keeps any order": {
			actual:    []actualDest{ad("198.18.0.3", 1), ad("198.18.0.1", 1), ad("198.18.0.2", 1)},
			wanted:    w3,
			unordered: true,
			wantKept:  3,
		},
		"unordered scheduler adds only the missing": {
			actual:     []actualDest{ad("198.18.0.3", 1), ad("198.18.0.9", 1)},
			wanted:     w3,
			unordered:  true,
			wantDelete: []string{"198.18.0.9:80"},
			wantAdd:    []string{"198.18.0.2", "198.18.0.1"},
			wantKept:   1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := planDestinations(key, tc.actual, tc.wanted, !tc.unordered, model.Encap{})
			if got := addrPorts(p.Delete); !slices.Equal(got, orEmpty(tc.wantDelete)) {
				t.Errorf("Delete = %v; want %v", got, tc.wantDelete)
			}
			if got := addrsOf(p.Update); !slices.Equal(got, orEmpty(tc.wantUpdate)) {
				t.Errorf("Update = %v; want %v", got, tc.wantUpdate)
			}
			if got := addrsOf(p.Add); !slices.Equal(got, orEmpty(tc.wantAdd)) {
				t.Errorf("Add = %v; want %v", got, tc.wantAdd)
			}
			if p.Kept != tc.wantKept {
				t.Errorf("Kept = %d; want %d", p.Kept, tc.wantKept)
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestChurnedDirectorMatchesFreshDirector drives one director through
// random churn (real servers removed, re-added, added, reweighted, and
// drift made behind its back) and checks after every step that the
// kernel's list equals the list a fresh director builds for the same set,
// which is what makes their Maglev tables equal. Steps that change the
// model run on remembered real-server lists; a drift step is followed by
// a full listing, as the periodic one would.
func TestChurnedDirectorMatchesFreshDirector(t *testing.T) {
	ctx := context.Background()
	vip := netip.MustParseAddr("203.0.113.10")
	pool := make([]netip.Addr, 24)
	for i := range pool {
		pool[i] = netip.AddrFrom4([4]byte{198, 18, byte(i % 3), byte(10 + 7*i%50)})
	}
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			weights := map[netip.Addr]int{}
			for _, a := range pool[:8] {
				weights[a] = 1
			}
			churned := &fakeIPVS{}
			d, err := New(churned, nil, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for step := range 30 {
				reconcile := d.Reconcile
				switch op := rng.IntN(5); op {
				case 0: // remove one
					for a := range weights {
						delete(weights, a)
						break
					}
				case 1, 2: // add one
					weights[pool[rng.IntN(len(pool))]] = 1 + rng.IntN(3)
				case 3: // reweight or drain
					for a := range weights {
						weights[a] = rng.IntN(3)
						break
					}
				case 4: // drift: someone deletes and re-adds a real server behind the director's back
					if s := churned.svcs; len(s) > 0 && len(s[0].dests) > 1 {
						dst := s[0].dests[len(s[0].dests)-1]
						_ = churned.DelDestination(&s[0].svc, &dst)
						_ = churned.NewDestination(&s[0].svc, &dst)
					}
					// Drift in a real-server list is repaired by a
					// full listing (see cache.go).
					reconcile = d.ReconcileFull
				}
				desired := desiredFor(vip, weights, rng)
				if _, err := reconcile(ctx, desired); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				memoryMatchesKernel(t, d, churned)
				fresh := &fakeIPVS{}
				fd, _ := New(fresh, nil, nil, Options{})
				if _, err := fd.Reconcile(ctx, desiredFor(vip, weights, rng)); err != nil {
					t.Fatalf("step %d: fresh: %v", step, err)
				}
				id := "203.0.113.10:80/6"
				if got, want := churned.order(id), fresh.order(id); !slices.Equal(got, want) {
					t.Fatalf("step %d: churned list %v; fresh list %v", step, got, want)
				}
				res, err := d.Reconcile(ctx, desired)
				if err != nil || res.Writes != 0 || !res.Plan.Empty() {
					t.Fatalf("step %d: resync after reconcile: writes %d, plan %+v, err %v", step, res.Writes, res.Plan, err)
				}
			}
		})
	}
}

// desiredFor builds a one-service model from weights, listing real servers
// in a random order (the order given must not matter).
func desiredFor(vip netip.Addr, weights map[netip.Addr]int, rng *rand.Rand) model.Desired {
	s := model.Service{VIP: vip, Protocol: model.TCP, Port: 80}
	for a, w := range weights {
		s.RealServers = append(s.RealServers, model.RealServer{Addr: a, Weight: w})
	}
	rng.Shuffle(len(s.RealServers), func(i, j int) { s.RealServers[i], s.RealServers[j] = s.RealServers[j], s.RealServers[i] })
	return model.Desired{Services: []model.Service{s}}
}
