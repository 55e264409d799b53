package director

import (
	"context"
	"strings"
	"testing"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

// fakeTunnels is fakeIPVS with real servers' tunnels, as the kernel
// keeps them: a write without tunnel attributes (moby/ipvs) makes a real
// server IPIP.
type fakeTunnels struct {
	*fakeIPVS
	encap map[string]model.Encap // svcID + " " + destID
}

func newFakeTunnels() *fakeTunnels {
	return &fakeTunnels{fakeIPVS: &fakeIPVS{}, encap: map[string]model.Encap{}}
}

func (f *fakeTunnels) set(s *ipvs.Service, d *ipvs.Destination, e model.Encap) {
	f.encap[svcID(s)+" "+destID(d)] = e
}

func (f *fakeTunnels) NewDestination(s *ipvs.Service, d *ipvs.Destination) error {
	return f.NewTunnelDestination(s, d, model.Encap{})
}

func (f *fakeTunnels) UpdateDestination(s *ipvs.Service, d *ipvs.Destination) error {
	return f.UpdateTunnelDestination(s, d, model.Encap{})
}

func (f *fakeTunnels) NewTunnelDestination(s *ipvs.Service, d *ipvs.Destination, e model.Encap) error {
	if err := f.fakeIPVS.NewDestination(s, d); err != nil {
		return err
	}
	f.calls[len(f.calls)-1] += " " + e.String()
	f.set(s, d, e)
	return nil
}

func (f *fakeTunnels) UpdateTunnelDestination(s *ipvs.Service, d *ipvs.Destination, e model.Encap) error {
	if err := f.fakeIPVS.UpdateDestination(s, d); err != nil {
		return err
	}
	f.calls[len(f.calls)-1] += " " + e.String()
	f.set(s, d, e)
	return nil
}

func (f *fakeTunnels) GetTunnelDestinations(s *ipvs.Service) ([]TunnelDestination, error) {
	dests, err := f.GetDestinations(s)
	if err != nil {
		return nil, err
	}
	out := make([]TunnelDestination, 0, len(dests))
	for _, d := range dests {
		out = append(out, TunnelDestination{Destination: d, Encap: f.encap[svcID(s)+" "+destID(d)]})
	}
	return out, nil
}

func gueService(port uint16) model.Service {
	s := service("203.0.113.10", 80, mrs("198.18.2.2", 1), mrs("198.18.2.3", 1))
	s.Encap = model.GUE(port)
	return s
}

func TestGUEServiceIsCreatedWithTunnelledRealServers(t *testing.T) {
	ctx := context.Background()
	f := newFakeTunnels()
	d := newDirector(t, f, Options{})
	if _, err := d.Reconcile(ctx, desired(gueService(6080))); err != nil {
		t.Fatal(err)
	}
	got := writesTo(f.calls, "203.0.113.10:80/6")
	want := []string{
		"NewService 203.0.113.10:80/6 lc",
		"NewDestination 203.0.113.10:80/6 198.18.2.3:80 gue:6080",
		"NewDestination 203.0.113.10:80/6 198.18.2.2:80 gue:6080",
		"UpdateService 203.0.113.10:80/6 mh",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Listed back from the kernel, nothing differs.
	f.calls = nil
	res, err := d.ReconcileFull(ctx, desired(gueService(6080)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Writes != 0 || len(f.calls) != 0 {
		t.Fatalf("full listing of a programmed GUE service wrote %d times: %v", res.Writes, f.calls)
	}
}

func TestEncapChangeUpdatesRealServersInPlace(t *testing.T) {
	ctx := context.Background()
	f := newFakeTunnels()
	d := newDirector(t, f, Options{})
	ipip := gueService(0)
	ipip.Encap = model.Encap{}
	steps := []struct {
		name string
		svc  model.Service
		full bool
		want string
	}{
		{"ipip first", ipip, false, ""},
		{"to gue (from memory)", gueService(6080), false, "gue:6080"},
		{"to another port (full listing)", gueService(6081), true, "gue:6081"},
		{"back to ipip", ipip, false, "ipip"},
	}
	for i, st := range steps {
		f.calls = nil
		run := d.Reconcile
		if st.full {
			run = d.ReconcileFull
		}
		if _, err := run(ctx, desired(st.svc)); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if i == 0 {
			continue
		}
		for _, c := range f.calls {
			if !strings.HasPrefix(c, "UpdateDestination ") || !strings.HasSuffix(c, " "+st.want) {
				t.Errorf("%s: write %q; want only in-place updates to %s (the list order, and with it the Maglev table, kept)", st.name, c, st.want)
			}
		}
		if len(f.calls) != 2 {
			t.Errorf("%s: %d writes %v, want one update per real server", st.name, len(f.calls), f.calls)
		}
		if got := f.order("203.0.113.10:80/6"); strings.Join(got, ",") != "198.18.2.2 w1,198.18.2.3 w1" {
			t.Errorf("%s: list order %v changed", st.name, got)
		}
	}
}

func TestEncapDriftIsRepairedByAFullListing(t *testing.T) {
	ctx := context.Background()
	f := newFakeTunnels()
	d := newDirector(t, f, Options{})
	if _, err := d.Reconcile(ctx, desired(gueService(6080))); err != nil {
		t.Fatal(err)
	}
	// Someone rewrites one real server without tunnel attributes
	// (ipvsadm -e without --tun-type): the kernel makes it IPIP.
	svc := keyService(gueService(6080).Key())
	if err := f.UpdateDestination(svc, kernelDestination(mrs("198.18.2.3", 1), 80)); err != nil {
		t.Fatal(err)
	}
	f.calls = nil
	if _, err := d.ReconcileFull(ctx, desired(gueService(6080))); err != nil {
		t.Fatal(err)
	}
	want := "UpdateDestination 203.0.113.10:80/6 198.18.2.3:80 gue:6080"
	if strings.Join(f.calls, "\n") != want {
		t.Fatalf("repair wrote %v, want %q", f.calls, want)
	}
}

func TestHandleWithoutTunnelsRefusesGUE(t *testing.T) {
	ctx := context.Background()
	f := &fakeIPVS{}
	d := newDirector(t, f, Options{})
	_, err := d.Reconcile(ctx, desired(gueService(6080)))
	if err == nil || !strings.Contains(err.Error(), "programs IPIP only") || !strings.Contains(err.Error(), "198.18.2.") {
		t.Fatalf("GUE through a handle without tunnels: err %v, want a refusal naming the real server", err)
	}
	ipip := gueService(0)
	ipip.Encap = model.Encap{}
	if _, err := d.Reconcile(ctx, desired(ipip)); err != nil {
		t.Fatalf("IPIP through a handle without tunnels: %v", err)
	}
}

func TestInvalidEncapIsRejectedNamingTheField(t *testing.T) {
	ctx := context.Background()
	f := newFakeTunnels()
	d := newDirector(t, f, Options{})
	bad := gueService(0)
	res, err := d.Reconcile(ctx, desired(bad))
	if err == nil || !res.Rejected || !strings.Contains(err.Error(), "service 203.0.113.10:80/tcp: encapsulation.port:") {
		t.Fatalf("gue without a port: rejected %v, err %v", res.Rejected, err)
	}
	if len(f.calls) != 0 {
		t.Fatalf("a rejected model wrote %v", f.calls)
	}
}
