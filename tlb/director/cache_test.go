package director

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

// listCountingIPVS records every GetDestinations (by service id) and
// counts the GetServices made through it.
type listCountingIPVS struct {
	*fakeIPVS
	listed       []string
	listServices int
}

func (l *listCountingIPVS) GetServices() ([]*ipvs.Service, error) {
	l.listServices++
	return l.fakeIPVS.GetServices()
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
	l.lc.listed, l.lc.listServices, l.f.calls = nil, 0, nil
	return l
}

func (l *cacheLab) reconcile(t *testing.T, d model.Desired) Result {
	t.Helper()
	l.lc.listed, l.lc.listServices, l.f.calls = nil, 0, nil
	res, err := l.d.Reconcile(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// memoryMatchesKernel fails t unless every service d remembers holds, in
// the fake kernel f, the real servers d remembers, in the same list order.
func memoryMatchesKernel(t *testing.T, d *Director, f *fakeIPVS) {
	t.Helper()
	for k, s := range d.mem.services {
		var want []string
		for _, a := range s.dests {
			want = append(want, fmt.Sprintf("%s w%d", a.Addr.Addr(), a.Weight))
		}
		if got := f.order(svcID(keyService(k))); !slices.Equal(got, want) {
			t.Errorf("%s: the kernel holds %v; the director remembers %v", k, got, want)
		}
	}
}

// listedNothing fails t unless the last reconcile listed nothing.
func (l *cacheLab) listedNothing(t *testing.T, step string) {
	t.Helper()
	if l.lc.listServices != 0 || len(l.lc.listed) != 0 {
		t.Errorf("%s: %d service listings, real servers of %v listed; want nothing listed", step, l.lc.listServices, l.lc.listed)
	}
}

func TestSingleChangeListsNothing(t *testing.T) {
	l := newCacheLab(t, 50, 0)

	l.clock.advance(time.Second)
	res := l.reconcile(t, l.want)
	l.listedNothing(t, "no-op resync")
	if res.Writes != 0 || !res.Plan.Empty() || res.Plan.Cached != 50 || res.FullListing || res.Services != 50 || res.RealServers != 200 {
		t.Fatalf("no-op resync: writes %d, cached %d, full %v, %d services, %d real servers; want nothing written, 50 cached, 50 and 200 held",
			res.Writes, res.Plan.Cached, res.FullListing, res.Services, res.RealServers)
	}

	steps := []struct {
		name      string
		change    func(d *model.Desired)
		wantCalls []string
		service   string   // whose list is checked
		wantOrder []string // nil: the service is gone
	}{
		{name: "drain one real server", change: func(d *model.Desired) { d.Services[7].RealServers[2].Weight = 0 },
			wantCalls: []string{"UpdateDestination 203.0.113.17:80/6 198.18.2.4:80"},
			service:   "203.0.113.17:80/6", wantOrder: []string{"198.18.2.2 w1", "198.18.2.3 w1", "198.18.2.4 w0", "198.18.2.5 w1"}},
		{name: "add a real server that sorts first", change: func(d *model.Desired) {
			d.Services[3].RealServers = append(d.Services[3].RealServers, mrs("198.18.2.1", 1))
		},
			wantCalls: []string{"NewDestination 203.0.113.13:80/6 198.18.2.1:80"},
			service:   "203.0.113.13:80/6", wantOrder: []string{"198.18.2.1 w1", "198.18.2.2 w1", "198.18.2.3 w1", "198.18.2.4 w1", "198.18.2.5 w1"}},
		{name: "replace a real server (canonical order kept)", change: func(d *model.Desired) {
			d.Services[4].RealServers[2].Addr = netip.MustParseAddr("198.18.2.1")
		},
			wantCalls: []string{"DelDestination 203.0.113.14:80/6 198.18.2.4:80", "NewDestination 203.0.113.14:80/6 198.18.2.1:80"},
			service:   "203.0.113.14:80/6", wantOrder: []string{"198.18.2.1 w1", "198.18.2.2 w1", "198.18.2.3 w1", "198.18.2.5 w1"}},
		{name: "add a real server that sorts last (the list is rebuilt)", change: func(d *model.Desired) {
			d.Services[5].RealServers = append(d.Services[5].RealServers, mrs("198.18.2.6", 1))
		},
			wantCalls: []string{"DelDestination 203.0.113.15:80/6 198.18.2.2:80", "DelDestination 203.0.113.15:80/6 198.18.2.3:80",
				"DelDestination 203.0.113.15:80/6 198.18.2.4:80", "DelDestination 203.0.113.15:80/6 198.18.2.5:80",
				"NewDestination 203.0.113.15:80/6 198.18.2.6:80", "NewDestination 203.0.113.15:80/6 198.18.2.5:80",
				"NewDestination 203.0.113.15:80/6 198.18.2.4:80", "NewDestination 203.0.113.15:80/6 198.18.2.3:80",
				"NewDestination 203.0.113.15:80/6 198.18.2.2:80"},
			service: "203.0.113.15:80/6", wantOrder: []string{"198.18.2.2 w1", "198.18.2.3 w1", "198.18.2.4 w1", "198.18.2.5 w1", "198.18.2.6 w1"}},
		{name: "remove a service", change: func(d *model.Desired) { d.Services = slices.Delete(d.Services, 9, 10) },
			wantCalls: []string{"DelService 203.0.113.19:80/6"}, service: "203.0.113.19:80/6"},
		{name: "add a service", change: func(d *model.Desired) {
			d.Services = append(d.Services, service("203.0.113.200", 80, mrs("198.18.2.3", 1), mrs("198.18.2.2", 2)))
		},
			wantCalls: []string{"NewService 203.0.113.200:80/6 lc", "NewDestination 203.0.113.200:80/6 198.18.2.3:80",
				"NewDestination 203.0.113.200:80/6 198.18.2.2:80", "UpdateService 203.0.113.200:80/6 mh"},
			service: "203.0.113.200:80/6", wantOrder: []string{"198.18.2.2 w2", "198.18.2.3 w1"}},
	}
	cur := l.want
	for _, st := range steps {
		next := model.Desired{Services: slices.Clone(cur.Services)}
		for i := range next.Services {
			next.Services[i].RealServers = slices.Clone(next.Services[i].RealServers)
		}
		st.change(&next)
		l.clock.advance(time.Second)
		res := l.reconcile(t, next)
		l.listedNothing(t, st.name)
		if !slices.Equal(l.f.calls, st.wantCalls) || res.Writes != len(st.wantCalls) || res.FullListing {
			t.Errorf("%s: calls %v (writes %d, full %v); want %v", st.name, l.f.calls, res.Writes, res.FullListing, st.wantCalls)
		}
		if got := l.f.order(st.service); !slices.Equal(got, st.wantOrder) {
			t.Errorf("%s: %s holds %v; want %v", st.name, st.service, got, st.wantOrder)
		}
		memoryMatchesKernel(t, l.d, l.f)
		// What the director remembers is what a full listing finds.
		full, err := l.d.ReconcileFull(context.Background(), next)
		if err != nil || full.Writes != 0 || !full.Plan.Empty() {
			t.Fatalf("%s: full listing after it: writes %d, plan %+v, err %v; want nothing to do", st.name, full.Writes, full.Plan, err)
		}
		cur = next
	}
}

func TestCallerReusingItsSlicesIsNotMissed(t *testing.T) {
	l := newCacheLab(t, 3, 0)
	// The caller changes the model it passed in place, then passes it
	// again: the change must be seen.
	l.want.Services[1].RealServers[0].Weight = 7
	l.clock.advance(time.Second)
	res := l.reconcile(t, l.want)
	if res.Writes != 1 || l.f.order("203.0.113.11:80/6")[0] != "198.18.2.2 w7" {
		t.Errorf("in-place change: writes %d, list %v; want the weight written", res.Writes, l.f.order("203.0.113.11:80/6"))
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

// BenchmarkResync1000x32 measures, on the fake kernel at 1,000 services
// x 32 real servers, a no-op resync from memory, one with a full listing,
// a single change (one real server drained or restored, one write), and
// one service added and removed: the director's own share of each.
func BenchmarkResync1000x32(b *testing.B) {
	var want model.Desired
	for i := range 1000 {
		s := model.Service{VIP: netip.AddrFrom4([4]byte{198, 19, byte(i / 250), byte(i % 250)}), Protocol: model.TCP, Port: 80}
		for j := range 32 {
			s.RealServers = append(s.RealServers, model.RealServer{Addr: netip.AddrFrom4([4]byte{198, 18, byte(j), 1}), Weight: 1})
		}
		want.Services = append(want.Services, s)
	}
	drained := model.Desired{Services: slices.Clone(want.Services)}
	drained.Services[500].RealServers = slices.Clone(drained.Services[500].RealServers)
	drained.Services[500].RealServers[16].Weight = 0
	extra := model.Desired{Services: append(slices.Clone(want.Services), model.Service{
		VIP: netip.MustParseAddr("198.19.250.1"), Protocol: model.TCP, Port: 80, RealServers: want.Services[0].RealServers})}
	cases := map[string]struct {
		full   bool
		models []model.Desired // reconciled in turn
		writes []int           // for each model
	}{
		"noop-from-memory":   {models: []model.Desired{want}, writes: []int{0}},
		"noop-full-listing":  {full: true, models: []model.Desired{want}, writes: []int{0}},
		"single-change":      {models: []model.Desired{drained, want}, writes: []int{1, 1}},
		"add-remove-service": {models: []model.Desired{extra, want}, writes: []int{34, 1}},
	}
	for name, tc := range cases {
		b.Run(name, func(b *testing.B) {
			d, err := New(&fakeIPVS{}, nil, nil, Options{})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := d.Reconcile(ctx, want); err != nil {
				b.Fatal(err)
			}
			reconcile := d.Reconcile
			if tc.full {
				reconcile = d.ReconcileFull
			}
			b.ReportAllocs()
			i := 0
			var controller time.Duration
			for b.Loop() {
				res, err := reconcile(ctx, tc.models[i%len(tc.models)])
				if err != nil || res.Writes != tc.writes[i%len(tc.models)] || res.FullListing != tc.full {
					b.Fatalf("writes %d, full %v, err %v", res.Writes, res.FullListing, err)
				}
				controller += res.ControllerTime()
				i++
			}
			// The fake kernel's time is KernelTime: this is the director's.
			b.ReportMetric(float64(controller.Nanoseconds())/float64(i), "controller-ns/op")
		})
	}
}
