package director

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/ipvs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/tlb/model"
)

func TestRealServerDriftRepairedAtTheNextFullListing(t *testing.T) {
	tests := map[string]struct {
		// repair is the reconcile that must list every service.
		repair func(l *cacheLab) (Result, error)
	}{
		"periodic full listing after FullListAfter": {repair: func(l *cacheLab) (Result, error) {
			l.clock.advance(DefaultFullListAfter)
			return l.d.Reconcile(context.Background(), l.want)
		}},
		"ReconcileFull": {repair: func(l *cacheLab) (Result, error) {
			return l.d.ReconcileFull(context.Background(), l.want)
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := newCacheLab(t, 3, 0)
			id := "203.0.113.11:80/6"
			before := l.f.order(id)
			// Someone deletes a real server behind the director's back.
			svc := &l.f.svcs[slices.IndexFunc(l.f.svcs, func(s *fakeSvc) bool { return svcID(&s.svc) == id })].svc
			dst := &ipvs.Destination{Address: netip.MustParseAddr("198.18.2.3").AsSlice(), Port: 80}
			if err := l.f.DelDestination(svc, dst); err != nil {
				t.Fatal(err)
			}

			// Within FullListAfter, an unchanged model is not listed: the
			// drift is not seen yet (the documented bound).
			l.clock.advance(DefaultFullListAfter / 2)
			res := l.reconcile(t, l.want)
			if res.FullListing || res.Writes != 0 || len(l.f.order(id)) != 3 {
				t.Fatalf("reconcile within FullListAfter: full %v, writes %d, list %v; want the cached pass", res.FullListing, res.Writes, l.f.order(id))
			}

			l.lc.listed, l.f.calls = nil, nil
			res, err := tc.repair(l)
			if err != nil {
				t.Fatal(err)
			}
			if !res.FullListing || len(l.lc.listed) != 3 {
				t.Errorf("repair: full %v, listed %v; want every service listed", res.FullListing, l.lc.listed)
			}
			if got := l.f.order(id); !slices.Equal(got, before) {
				t.Errorf("after the full listing the service holds %v; want %v again", got, before)
			}
			// The repair made, the next resync is cached and writes nothing.
			l.clock.advance(time.Second)
			if res := l.reconcile(t, l.want); res.Writes != 0 || res.FullListing || res.Plan.Cached != 3 {
				t.Errorf("resync after repair: writes %d, full %v, cached %d", res.Writes, res.FullListing, res.Plan.Cached)
			}
		})
	}
}

func TestKernelServiceChangesRepairedAtTheNextFullListing(t *testing.T) {
	l := newCacheLab(t, 3, 0)
	// Behind the director's back: one service's scheduler changed, one
	// service deleted, a foreign service added.
	if err := l.f.UpdateService(&ipvs.Service{Address: netip.MustParseAddr("203.0.113.10").AsSlice(), Protocol: 6, Port: 80, SchedName: "rr"}); err != nil {
		t.Fatal(err)
	}
	if err := l.f.DelService(keyService(l.want.Services[1].Key())); err != nil {
		t.Fatal(err)
	}
	foreign := foreignService(t, l.f)

	// Within FullListAfter a resync plans from memory and does not see it
	// (the documented bound).
	l.clock.advance(time.Second)
	res := l.reconcile(t, l.want)
	l.listedNothing(t, "resync from memory")
	if res.FullListing || res.Writes != 0 {
		t.Fatalf("resync from memory: full %v, writes %d; want nothing seen", res.FullListing, res.Writes)
	}

	l.clock.advance(DefaultFullListAfter)
	res = l.reconcile(t, l.want)
	if !res.FullListing || len(res.Plan.UpdateServices) != 1 || len(res.Plan.AddServices) != 1 || res.Plan.Foreign != 1 {
		t.Errorf("full listing: full %v, %d updated, %d added, %d foreign; want true, 1, 1, 1",
			res.FullListing, len(res.Plan.UpdateServices), len(res.Plan.AddServices), res.Plan.Foreign)
	}
	if slices.Contains(l.lc.listed, svcID(foreign)) {
		t.Errorf("the foreign service's real servers were listed: %v", l.lc.listed)
	}
	for _, c := range l.f.calls {
		if strings.Contains(c, "203.0.113.99") {
			t.Errorf("foreign service touched: %s", c)
		}
	}
	if got := l.f.order("203.0.113.11:80/6"); len(got) != 4 {
		t.Errorf("deleted service not recreated with its real servers: %v", got)
	}
	if i := slices.IndexFunc(l.f.svcs, func(s *fakeSvc) bool { return svcID(&s.svc) == "203.0.113.10:80/6" }); l.f.svcs[i].svc.SchedName != "mh" {
		t.Errorf("scheduler not repaired: %s", l.f.svcs[i].svc.SchedName)
	}
}

func TestRefusedWriteListsAndRepairsAtOnce(t *testing.T) {
	tests := map[string]struct {
		drift  func(t *testing.T, l *cacheLab)
		change func(d *model.Desired)
		check  func(t *testing.T, l *cacheLab)
	}{
		"service deleted, then one of its real servers drained": {
			drift: func(t *testing.T, l *cacheLab) {
				if err := l.f.DelService(keyService(l.want.Services[1].Key())); err != nil {
					t.Fatal(err)
				}
			},
			change: func(d *model.Desired) { d.Services[1].RealServers[0].Weight = 0 },
			check: func(t *testing.T, l *cacheLab) {
				if got := l.f.order("203.0.113.11:80/6"); !slices.Equal(got, []string{"198.18.2.2 w0", "198.18.2.3 w1", "198.18.2.4 w1", "198.18.2.5 w1"}) {
					t.Errorf("service holds %v; want it recreated with the drain", got)
				}
			},
		},
		"real server deleted, then reweighted": {
			drift: func(t *testing.T, l *cacheLab) {
				dst := &ipvs.Destination{Address: netip.MustParseAddr("198.18.2.3").AsSlice(), Port: 80}
				if err := l.f.DelDestination(keyService(l.want.Services[2].Key()), dst); err != nil {
					t.Fatal(err)
				}
			},
			change: func(d *model.Desired) { d.Services[2].RealServers[1].Weight = 4 },
			check: func(t *testing.T, l *cacheLab) {
				if got := l.f.order("203.0.113.12:80/6"); !slices.Equal(got, []string{"198.18.2.2 w1", "198.18.2.3 w4", "198.18.2.4 w1", "198.18.2.5 w1"}) {
					t.Errorf("service holds %v; want the real server back, reweighted, in canonical order", got)
				}
			},
		},
		"a service of the new model created by someone else": {
			drift: func(t *testing.T, l *cacheLab) {
				if err := l.f.NewService(&ipvs.Service{Address: netip.MustParseAddr("203.0.113.50").AsSlice(), Protocol: 6, Port: 80, SchedName: "rr"}); err != nil {
					t.Fatal(err)
				}
			},
			change: func(d *model.Desired) {
				d.Services = append(d.Services, service("203.0.113.50", 80, mrs("198.18.2.2", 1)))
			},
			check: func(t *testing.T, l *cacheLab) {
				if got := l.f.order("203.0.113.50:80/6"); !slices.Equal(got, []string{"198.18.2.2 w1"}) {
					t.Errorf("service holds %v; want it adopted and programmed", got)
				}
				if !slices.Contains(l.d.Owned(), model.Key{VIP: netip.MustParseAddr("203.0.113.50"), Protocol: model.TCP, Port: 80}) {
					t.Errorf("not adopted: owned %v", l.d.Owned())
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := newCacheLab(t, 3, 0)
			tc.drift(t, l)
			next := model.Desired{Services: slices.Clone(l.want.Services)}
			for i := range next.Services {
				next.Services[i].RealServers = slices.Clone(next.Services[i].RealServers)
			}
			tc.change(&next)
			l.clock.advance(time.Second)
			res := l.reconcile(t, next)
			if !res.StaleMemory || !res.FullListing {
				t.Errorf("stale %v, full %v; want the refused write to send the reconcile to a full listing", res.StaleMemory, res.FullListing)
			}
			tc.check(t, l)
			l.clock.advance(time.Second)
			if res := l.reconcile(t, next); res.Writes != 0 || res.FullListing {
				t.Errorf("next resync: writes %d, full %v; want nothing, from memory", res.Writes, res.FullListing)
			}
		})
	}
}

func TestForgetsRecordedServiceGoneFromKernel(t *testing.T) {
	ctx := context.Background()
	f := &fakeIPVS{}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	d := newDirector(t, f, Options{Metrics: m})
	if _, err := d.Reconcile(ctx, desired(service("203.0.113.10", 80))); err != nil {
		t.Fatal(err)
	}
	f.svcs = nil // flushed behind the director's back
	f.calls = nil
	// From memory the director deletes the service; the kernel refuses,
	// and the same reconcile lists, finds it gone and forgets it.
	res, err := d.Reconcile(ctx, desired())
	if err != nil || len(res.Plan.Forget) != 1 || !res.StaleMemory || !slices.Equal(f.calls, []string{"DelService 203.0.113.10:80/6"}) {
		t.Fatalf("plan %+v calls %v stale %v err %v; want one forget after the refused delete", res.Plan, f.calls, res.StaleMemory, err)
	}
	if len(d.Owned()) != 0 {
		t.Errorf("still owns %v", d.Owned())
	}
	if n, _ := gather(reg, "tlb_director_stale_memory_total"); n != 1 {
		t.Errorf("tlb_director_stale_memory_total = %v; want 1", n)
	}
}
