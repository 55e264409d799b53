package director

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

// listCountingIPVS records every GetDestinations (by service id) made
// through it.
type listCountingIPVS struct {
	*fakeIPVS
	listed []string
}

func (l *listCountingIPVS) GetDestinations(s *ipvs.Service) ([]*ipvs.Destination, error) {
	l.listed = append(l.listed, svcID(s))
	return l.fakeIPVS.GetDestinations(s)
}

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// manyServices returns n services of 203.0.113.0/24 port 80, each with
// the same four real servers of weight 1.
func manyServices(n int) model.Desired {
	var d model.Desired
	for i := range n {
		d.Services = append(d.Services, service(fmt.Sprintf("203.0.113.%d", 10+i), 80,
			mrs("198.18.2.2", 1), mrs("198.18.2.3", 1), mrs("198.18.2.4", 1), mrs("198.18.2.5", 1)))
	}
	return d
}

// cacheLab is a director on a fake kernel with a hand-moved clock, in
// sync with manyServices(n).
type cacheLab struct {
	f     *fakeIPVS
	lc    *listCountingIPVS
	clock *fakeClock
	d     *Director
	want  model.Desired
}

func newCacheLab(t *testing.T, n int, fullListAfter time.Duration) *cacheLab {
	t.Helper()
	l := &cacheLab{f: &fakeIPVS{}, clock: &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, want: manyServices(n)}
	l.lc = &listCountingIPVS{fakeIPVS: l.f}
	l.d = newDirector(t, l.lc, Options{Now: l.clock.now, FullListAfter: fullListAfter})
	res, err := l.d.Reconcile(context.Background(), l.want)
	if err != nil {
		t.Fatal(err)
	}
	if !res.FullListing || len(res.Plan.AddServices) != n {
		t.Fatalf("first reconcile: full listing %v, %d services added; want a full listing adding %d", res.FullListing, len(res.Plan.AddServices), n)
	}
	l.lc.listed, l.f.calls = nil, nil
	return l
}

func (l *cacheLab) reconcile(t *testing.T, d model.Desired) Result {
	t.Helper()
	l.lc.listed, l.f.calls = nil, nil
	res, err := l.d.Reconcile(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSingleChangeListsOnlyTheChangedService(t *testing.T) {
	l := newCacheLab(t, 50, 0)

	l.clock.advance(time.Second)
	res := l.reconcile(t, l.want)
	if res.Writes != 0 || !res.Plan.Empty() || len(l.lc.listed) != 0 || res.Plan.Cached != 50 || res.FullListing {
		t.Fatalf("no-op resync: writes %d, listed %v, cached %d, full %v; want nothing written or listed, 50 cached",
			res.Writes, l.lc.listed, res.Plan.Cached, res.FullListing)
	}

	changed := l.want.Sorted()
	changed.Services[7].RealServers[2].Weight = 0
	l.clock.advance(time.Second)
	res = l.reconcile(t, changed)
	if want := []string{"203.0.113.17:80/6"}; !slices.Equal(l.lc.listed, want) {
		t.Errorf("single change listed %v; want only %v", l.lc.listed, want)
	}
	if res.Writes != 1 || res.Plan.Listed != 1 || res.Plan.Cached != 49 {
		t.Errorf("single change: writes %d, listed %d, cached %d; want 1, 1, 49", res.Writes, res.Plan.Listed, res.Plan.Cached)
	}
	if got := l.f.order("203.0.113.17:80/6"); !slices.Equal(got, []string{"198.18.2.2 w1", "198.18.2.3 w1", "198.18.2.4 w0", "198.18.2.5 w1"}) {
		t.Errorf("changed service holds %v", got)
	}

	// A real server added in the middle: listed, kept in canonical order.
	added := changed.Sorted()
	added.Services[3].RealServers = append(added.Services[3].RealServers, mrs("198.18.2.1", 1))
	l.clock.advance(time.Second)
	res = l.reconcile(t, added)
	if want := []string{"203.0.113.13:80/6"}; !slices.Equal(l.lc.listed, want) {
		t.Errorf("add listed %v; want only %v", l.lc.listed, want)
	}
	if got := l.f.order("203.0.113.13:80/6"); !slices.Equal(got, []string{"198.18.2.1 w1", "198.18.2.2 w1", "198.18.2.3 w1", "198.18.2.4 w1", "198.18.2.5 w1"}) {
		t.Errorf("service with an added real server holds %v; want canonical order", got)
	}
}

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

func TestErrorForcesFullListing(t *testing.T) {
	tests := map[string]struct {
		fail func(l *cacheLab) error
	}{
		"apply error": {fail: func(l *cacheLab) error {
			l.f.failOn = "UpdateDestination 203.0.113.10:80"
			changed := l.want.Sorted()
			changed.Services[0].RealServers[0].Weight = 5
			_, err := l.d.Reconcile(context.Background(), changed)
			l.f.failOn = ""
			return err
		}},
		"rejected model": {fail: func(l *cacheLab) error {
			_, err := l.d.Reconcile(context.Background(), desired(service("203.0.113.10", 80, mrs("198.18.2.3", 70000))))
			return err
		}},
		"cancelled context": {fail: func(l *cacheLab) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := l.d.Reconcile(ctx, l.want)
			return err
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := newCacheLab(t, 4, 0)
			l.clock.advance(time.Second)
			if err := tc.fail(l); err == nil {
				t.Fatal("injected failure returned no error")
			}
			l.clock.advance(time.Second)
			res := l.reconcile(t, l.want)
			if !res.FullListing || len(l.lc.listed) != 4 || res.Plan.Cached != 0 {
				t.Errorf("reconcile after an error: full %v, listed %v, cached %d; want all 4 listed", res.FullListing, l.lc.listed, res.Plan.Cached)
			}
			if got := l.f.order("203.0.113.10:80/6"); !slices.Equal(got, []string{"198.18.2.2 w1", "198.18.2.3 w1", "198.18.2.4 w1", "198.18.2.5 w1"}) {
				t.Errorf("after the full listing the service holds %v", got)
			}
			l.clock.advance(time.Second)
			if res := l.reconcile(t, l.want); res.FullListing || res.Plan.Cached != 4 {
				t.Errorf("next reconcile: full %v, cached %d; want the cache used again", res.FullListing, res.Plan.Cached)
			}
		})
	}
}

func TestKernelServiceChangesSeenWithoutFullListing(t *testing.T) {
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

	l.clock.advance(time.Second)
	res := l.reconcile(t, l.want)
	if res.FullListing {
		t.Fatal("expected a cached reconcile")
	}
	if want := []string{"203.0.113.10:80/6"}; !slices.Equal(l.lc.listed, want) {
		t.Errorf("listed %v; want only the service whose scheduler changed, %v (never the foreign one)", l.lc.listed, want)
	}
	if len(res.Plan.UpdateServices) != 1 || len(res.Plan.AddServices) != 1 || res.Plan.Foreign != 1 || res.Plan.Cached != 1 {
		t.Errorf("plan: %d updated, %d added, %d foreign, %d cached; want 1, 1, 1, 1", len(res.Plan.UpdateServices), len(res.Plan.AddServices), res.Plan.Foreign, res.Plan.Cached)
	}
	if got := writesTo(l.f.calls, svcID(foreign)); len(got) != 0 {
		t.Errorf("foreign service touched: %v", got)
	}
	for _, c := range l.f.calls {
		if strings.Contains(c, "203.0.113.99") {
			t.Errorf("foreign service touched: %s", c)
		}
	}
	if got := l.f.order("203.0.113.11:80/6"); len(got) != 4 {
		t.Errorf("deleted service not recreated with its real servers: %v", got)
	}
}

func TestNegativeFullListAfterListsEveryTime(t *testing.T) {
	l := newCacheLab(t, 3, -1)
	for i := range 3 {
		l.clock.advance(time.Second)
		res := l.reconcile(t, l.want)
		if !res.FullListing || len(l.lc.listed) != 3 || res.Plan.Cached != 0 {
			t.Errorf("reconcile %d: full %v, listed %v, cached %d; want every service listed", i, res.FullListing, l.lc.listed, res.Plan.Cached)
		}
	}
}

// BenchmarkResync1000x32 measures a no-op resync of 1,000 services x 32
// real servers on the fake kernel, on remembered real-server lists and
// with a full listing: the director's own share of a resync.
func BenchmarkResync1000x32(b *testing.B) {
	var want model.Desired
	for i := range 1000 {
		s := model.Service{VIP: netip.AddrFrom4([4]byte{198, 19, byte(i / 250), byte(i % 250)}), Protocol: model.TCP, Port: 80}
		for j := range 32 {
			s.RealServers = append(s.RealServers, model.RealServer{Addr: netip.AddrFrom4([4]byte{198, 18, byte(j), 1}), Weight: 1})
		}
		want.Services = append(want.Services, s)
	}
	for name, full := range map[string]bool{"cached": false, "full": true} {
		b.Run(name, func(b *testing.B) {
			d, err := New(&fakeIPVS{}, nil, nil, Options{})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := d.Reconcile(ctx, want); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				reconcile := d.Reconcile
				if full {
					reconcile = d.ReconcileFull
				}
				if res, err := reconcile(ctx, want); err != nil || res.Writes != 0 {
					b.Fatalf("writes %d, err %v", res.Writes, err)
				}
			}
		})
	}
}
