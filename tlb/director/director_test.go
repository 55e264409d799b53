package director

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/ipvs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/tlb/model"
)

func service(vip string, port uint16, rs ...model.RealServer) model.Service {
	return model.Service{VIP: netip.MustParseAddr(vip), Protocol: model.TCP, Port: port, RealServers: rs}
}

func desired(svcs ...model.Service) model.Desired { return model.Desired{Services: svcs} }

func writesTo(calls []string, svc string) []string {
	var out []string
	for _, c := range calls {
		if strings.Contains(c, " "+svc) {
			out = append(out, c)
		}
	}
	return out
}

// foreignService puts a service the director did not create into f.
func foreignService(t *testing.T, f *fakeIPVS) *ipvs.Service {
	t.Helper()
	s := &ipvs.Service{Address: net.ParseIP("203.0.113.99").To4(), Protocol: 6, Port: 443, SchedName: "wrr", AddressFamily: 2}
	if err := f.NewService(s); err != nil {
		t.Fatal(err)
	}
	if err := f.NewDestination(s, &ipvs.Destination{Address: net.ParseIP("10.1.1.1").To4(), Port: 443, Weight: 5}); err != nil {
		t.Fatal(err)
	}
	f.calls = nil
	return s
}

func newDirector(t *testing.T, f IPVS, opts Options) *Director {
	t.Helper()
	d, err := New(f, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestReconcileScenario(t *testing.T) {
	ctx := context.Background()
	f := &fakeIPVS{}
	foreign := foreignService(t, f)
	d := newDirector(t, f, Options{})
	web := service("203.0.113.10", 80, mrs("198.18.2.3", 1), mrs("198.18.2.2", 1))

	steps := []struct {
		name       string
		desired    model.Desired
		wantWrites int
		wantErr    string
		wantOrder  []string // list of 203.0.113.10:80 afterwards
	}{
		{name: "create from empty", desired: desired(web), wantWrites: 4, // service staged on lc, 2 real servers, switch to mh
			wantOrder: []string{"198.18.2.2 w1", "198.18.2.3 w1"}},
		{name: "no-op resync writes nothing", desired: desired(web), wantWrites: 0,
			wantOrder: []string{"198.18.2.2 w1", "198.18.2.3 w1"}},
		{name: "drain keeps position", desired: desired(service("203.0.113.10", 80, mrs("198.18.2.3", 0), mrs("198.18.2.2", 1))), wantWrites: 1,
			wantOrder: []string{"198.18.2.2 w1", "198.18.2.3 w0"}},
		{name: "invalid model writes nothing", desired: desired(service("203.0.113.10", 80, mrs("198.18.2.3", 70000))), wantWrites: 0,
			wantErr:   "service 203.0.113.10:80/tcp: realServers[0].weight: must be 0..65535",
			wantOrder: []string{"198.18.2.2 w1", "198.18.2.3 w0"}},
		{name: "service removed from model is deleted", desired: desired(), wantWrites: 1},
	}
	for _, st := range steps {
		f.calls = nil
		res, err := d.Reconcile(ctx, st.desired)
		if st.wantErr == "" && err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)) {
			t.Fatalf("%s: err = %v; want %q", st.name, err, st.wantErr)
		}
		if res.Writes != st.wantWrites || len(f.calls) != st.wantWrites {
			t.Errorf("%s: Writes = %d, calls %v; want %d", st.name, res.Writes, f.calls, st.wantWrites)
		}
		if got := f.order("203.0.113.10:80/6"); !slices.Equal(got, st.wantOrder) {
			t.Errorf("%s: list = %v; want %v", st.name, got, st.wantOrder)
		}
		if w := writesTo(f.calls, svcID(foreign)); len(w) != 0 {
			t.Errorf("%s: wrote to the foreign service: %v", st.name, w)
		}
	}
	if got := f.order(svcID(foreign)); !slices.Equal(got, []string{"10.1.1.1 w5"}) {
		t.Errorf("foreign service changed: %v", got)
	}
	if len(f.svcs) != 1 || f.svcs[0].svc.SchedName != "wrr" {
		t.Errorf("kernel services = %+v; want only the foreign one, unchanged", f.svcs)
	}
}

func TestReconcileServiceAttributes(t *testing.T) {
	ctx := context.Background()
	f := &fakeIPVS{}
	d := newDirector(t, f, Options{})
	s := service("203.0.113.10", 80, mrs("198.18.2.2", 1))
	if _, err := d.Reconcile(ctx, desired(s)); err != nil {
		t.Fatal(err)
	}
	if got := f.svcs[0].svc; got.SchedName != "mh" || got.Flags != model.SvcFlagSched1|model.SvcFlagSched2 {
		t.Fatalf("created service sched %q flags %#x; want mh with flags 0x18", got.SchedName, got.Flags)
	}
	if got := f.svcs[0].dests[0].ConnectionFlags; got != ipvs.ConnFwdTunnel {
		t.Errorf("forwarding = %#x; want tunnel", got)
	}
	s.Scheduler = model.WeightedRoundRobin
	f.calls = nil
	res, err := d.Reconcile(ctx, desired(s))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.UpdateServices) != 1 || !slices.Equal(f.calls, []string{"UpdateService 203.0.113.10:80/6 wrr"}) {
		t.Errorf("calls = %v; want one UpdateService", f.calls)
	}
	if got := f.svcs[0].svc; got.SchedName != "wrr" || got.Flags != 0 {
		t.Errorf("updated service sched %q flags %#x; want wrr, no flags", got.SchedName, got.Flags)
	}
}

func TestAdoptsServiceInModel(t *testing.T) {
	ctx := context.Background()
	f := &fakeIPVS{}
	pre := &ipvs.Service{Address: net.ParseIP("203.0.113.10").To4(), Protocol: 6, Port: 80, SchedName: "rr", AddressFamily: 2}
	if err := f.NewService(pre); err != nil {
		t.Fatal(err)
	}
	d := newDirector(t, f, Options{})
	res, err := d.Reconcile(ctx, desired(service("203.0.113.10", 80, mrs("198.18.2.2", 1))))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Adopt) != 1 || len(res.Plan.UpdateServices) != 1 {
		t.Fatalf("plan = %+v; want one adopt and one update", res.Plan)
	}
	// Now the director owns it: dropping it from the model deletes it.
	if _, err := d.Reconcile(ctx, desired()); err != nil {
		t.Fatal(err)
	}
	if len(f.svcs) != 0 {
		t.Errorf("adopted service not deleted: %+v", f.svcs)
	}
}

// TestLeavesServiceOfAnotherIPVSUser: a service of the model that the
// kernel already holds with a masqueraded real server (kube-proxy's IPVS
// mode for a load balancer IP with ipMode VIP) is neither adopted nor
// changed: the reconcile says so in an error naming it, applies the rest
// of the model, and takes the service only once the other user deleted
// it.
func TestLeavesServiceOfAnotherIPVSUser(t *testing.T) {
	ctx := context.Background()
	f := &fakeIPVS{}
	held := &ipvs.Service{Address: net.ParseIP("203.0.113.10").To4(), Protocol: 6, Port: 80, SchedName: "rr", AddressFamily: 2}
	if err := f.NewService(held); err != nil {
		t.Fatal(err)
	}
	pod := &ipvs.Destination{Address: net.ParseIP("10.244.1.5").To4(), Port: 8080, Weight: 1, ConnectionFlags: ipvs.ConnectionFlagMasq, AddressFamily: 2}
	if err := f.NewDestination(held, pod); err != nil {
		t.Fatal(err)
	}
	d := newDirector(t, f, Options{})
	want := desired(service("203.0.113.10", 80, mrs("198.18.2.2", 1)), service("203.0.113.11", 80, mrs("198.18.2.2", 1)))
	for range 2 { // the error makes the next reconcile list again: still left alone
		res, err := d.Reconcile(ctx, want)
		if err == nil || !strings.Contains(err.Error(), "203.0.113.10:80/tcp is held by another IPVS user") || !strings.Contains(err.Error(), "10.244.1.5:8080") {
			t.Fatalf("reconcile error %v; want one naming 203.0.113.10:80/tcp and its real server 10.244.1.5:8080", err)
		}
		if len(res.Plan.Held) != 1 || len(res.Plan.Adopt) != 0 {
			t.Fatalf("plan = %+v; want the service held, nothing adopted", res.Plan)
		}
	}
	if got := f.svcs[0]; got.svc.SchedName != "rr" || len(got.dests) != 1 || got.dests[0].ConnectionFlags&ipvs.ConnFwdMask != ipvs.ConnectionFlagMasq {
		t.Errorf("the other user's service became %+v; want it untouched", got)
	}
	if slices.Contains(d.Owned(), want.Services[0].Key()) || !slices.Contains(d.Owned(), want.Services[1].Key()) {
		t.Errorf("owned %v; want 203.0.113.11:80 only", d.Owned())
	}
	// The other user lets it go: the director creates its own.
	if err := f.DelService(held); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reconcile(ctx, want); err != nil {
		t.Fatalf("reconcile after the other user left: %v", err)
	}
	if !slices.Contains(d.Owned(), want.Services[0].Key()) {
		t.Errorf("owned %v; want 203.0.113.10:80 taken once free", d.Owned())
	}
}

func TestRecordSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := &fakeIPVS{}
	d1 := newDirector(t, f, Options{RuntimeDir: dir})
	if _, err := d1.Reconcile(ctx, desired(service("203.0.113.10", 80, mrs("198.18.2.2", 1)))); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil || !strings.Contains(string(data), `"203.0.113.10:80/tcp"`) {
		t.Fatalf("record file = %q, %v", data, err)
	}

	// A director without the record sees the service as foreign.
	stranger := newDirector(t, f, Options{RuntimeDir: t.TempDir()})
	if res, err := stranger.Reconcile(ctx, desired()); err != nil || res.Writes != 0 || res.Plan.Foreign != 1 {
		t.Fatalf("director without record: writes %d foreign %d err %v; want 0 writes, 1 foreign", res.Writes, res.Plan.Foreign, err)
	}
	// A restarted director with the record knows it created it.
	d2 := newDirector(t, f, Options{RuntimeDir: dir})
	if got := d2.Owned(); len(got) != 1 || got[0].String() != "203.0.113.10:80/tcp" {
		t.Fatalf("restarted director owns %v", got)
	}
	if _, err := d2.Reconcile(ctx, desired()); err != nil {
		t.Fatal(err)
	}
	if len(f.svcs) != 0 {
		t.Errorf("restarted director did not delete its service: %+v", f.svcs)
	}
	data, _ = os.ReadFile(filepath.Join(dir, RecordFile))
	if strings.Contains(string(data), "203.0.113.10") {
		t.Errorf("record still lists the deleted service: %s", data)
	}
}

func TestApplyErrorIsReturnedAndOthersApplied(t *testing.T) {
	ctx := context.Background()
	f := &fakeIPVS{failOn: "NewService 203.0.113.10:80"}
	d := newDirector(t, f, Options{})
	_, err := d.Reconcile(ctx, desired(service("203.0.113.10", 80, mrs("198.18.2.2", 1)), service("203.0.113.11", 80, mrs("198.18.2.2", 1))))
	if err == nil || !strings.Contains(err.Error(), "create IPVS service 203.0.113.10:80/tcp") {
		t.Fatalf("err = %v; want it to name the failed service", err)
	}
	if len(f.svcs) != 1 || f.order("203.0.113.11:80/6") == nil {
		t.Errorf("the other service was not applied: %+v", f.svcs)
	}
	f.failOn = ""
	res, err := d.Reconcile(ctx, desired(service("203.0.113.10", 80, mrs("198.18.2.2", 1)), service("203.0.113.11", 80, mrs("198.18.2.2", 1))))
	if err != nil || len(res.Plan.AddServices) != 1 {
		t.Errorf("retry: plan %+v err %v; want the failed service added", res.Plan, err)
	}
}

func TestSysctlsSetOnlyWhenDifferent(t *testing.T) {
	ctx := context.Background()
	sys := &fakeSysctls{values: map[string]string{"net/ipv4/vs/conntrack": "0"}}
	d, err := New(&fakeIPVS{}, sys, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Reconcile(ctx, desired())
	if err != nil {
		t.Fatal(err)
	}
	if res.SysctlWrites != len(DirectorSysctls)-1 {
		t.Errorf("first reconcile wrote %d sysctls; want %d", res.SysctlWrites, len(DirectorSysctls)-1)
	}
	for _, s := range DirectorSysctls {
		if sys.values[s.Name] != s.Value {
			t.Errorf("%s = %q; want %q", s.Name, sys.values[s.Name], s.Value)
		}
	}
	if sys.values["net/ipv4/vs/sloppy_tcp"] != "1" {
		t.Error("sloppy_tcp not set")
	}
	res, _ = d.Reconcile(ctx, desired())
	if res.SysctlWrites != 0 {
		t.Errorf("second reconcile wrote %d sysctls; want 0", res.SysctlWrites)
	}
	sys.values["net/ipv4/vs/sloppy_tcp"] = "0" // drift
	res, _ = d.Reconcile(ctx, desired())
	if res.SysctlWrites != 1 || sys.values["net/ipv4/vs/sloppy_tcp"] != "1" {
		t.Errorf("drift not repaired: writes %d value %q", res.SysctlWrites, sys.values["net/ipv4/vs/sloppy_tcp"])
	}
}

func TestMetrics(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIPVS{}
	foreignService(t, f)
	d := newDirector(t, f, Options{Metrics: m})
	good := desired(service("203.0.113.10", 80, mrs("198.18.2.2", 1), mrs("198.18.2.3", 1)), service("203.0.113.10", 443, mrs("198.18.2.2", 1)))
	if _, err := d.Reconcile(ctx, good); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reconcile(ctx, good); err != nil { // both services from the remembered state
		t.Fatal(err)
	}
	_, _ = d.Reconcile(ctx, desired(service("203.0.113.10", 0)))
	checks := map[string]float64{
		"tlb_director_services_listed_total":   0, // first reconcile: nothing in the kernel yet
		"tlb_director_services_cached_total":   2,
		"tlb_director_full_listings_total":     1,
		"tlb_director_vips_programmed":         1,
		"tlb_director_services_programmed":     2,
		"tlb_director_real_servers_programmed": 3,
		"tlb_director_netlink_writes_total":    6,
		"tlb_director_sync_errors_total":       1,
		"tlb_director_foreign_services":        1,
	}
	for name, want := range checks {
		got, err := gather(reg, name)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}
	if n, _ := gather(reg, "tlb_director_sync_duration_seconds"); n != 3 {
		t.Errorf("sync duration observations = %v; want 3", n)
	}
}

func gather(reg *prometheus.Registry, name string) (float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		m := mf.GetMetric()[0]
		if h := m.GetHistogram(); h != nil {
			return float64(h.GetSampleCount()), nil
		}
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue(), nil
		}
		return m.GetCounter().GetValue(), nil
	}
	return -1, nil
}

func TestParseKey(t *testing.T) {
	tests := map[string]struct {
		in      string
		wantErr bool
	}{
		"ipv4":          {in: "203.0.113.10:80/tcp"},
		"ipv6":          {in: "[2001:db8::1]:53/udp"},
		"no protocol":   {in: "203.0.113.10:80", wantErr: true},
		"bad protocol":  {in: "203.0.113.10:80/icmp", wantErr: true},
		"bad addr port": {in: "203.0.113.10/tcp", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k, err := ParseKey(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseKey(%q) err = %v; wantErr %v", tc.in, err, tc.wantErr)
			}
			if err == nil && k.String() != tc.in {
				t.Errorf("round trip = %q; want %q", k.String(), tc.in)
			}
		})
	}
}

func TestLoadRecordRejectsCorruptFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, RecordFile), []byte(`{"version":1,"services":["nonsense"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadRecord(dir)
	if err == nil || !strings.Contains(err.Error(), "services[0]") {
		t.Errorf("err = %v; want an error naming services[0]", err)
	}
}

func TestNewTableServiceIsStaged(t *testing.T) {
	ctx := context.Background()
	web := service("203.0.113.10", 80, mrs("198.18.2.3", 1), mrs("198.18.2.2", 1), mrs("198.18.2.4", 0))
	tests := map[string]struct {
		noSched   string
		wantCalls []string
	}{
		"mh built on lc then switched once": {
			wantCalls: []string{
				"NewService 203.0.113.10:80/6 lc",
				"NewDestination 203.0.113.10:80/6 198.18.2.4:80",
				"NewDestination 203.0.113.10:80/6 198.18.2.3:80",
				"NewDestination 203.0.113.10:80/6 198.18.2.2:80",
				"UpdateService 203.0.113.10:80/6 mh",
			},
		},
		"kernel without lc gets mh directly": {
			noSched: "lc",
			wantCalls: []string{
				"NewService 203.0.113.10:80/6 lc",
				"NewService 203.0.113.10:80/6 mh",
				"NewDestination 203.0.113.10:80/6 198.18.2.4:80",
				"NewDestination 203.0.113.10:80/6 198.18.2.3:80",
				"NewDestination 203.0.113.10:80/6 198.18.2.2:80",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := &fakeIPVS{noSched: tc.noSched}
			d := newDirector(t, f, Options{})
			if _, err := d.Reconcile(ctx, desired(web)); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.calls, tc.wantCalls) {
				t.Errorf("calls =\n%s\nwant\n%s", strings.Join(f.calls, "\n"), strings.Join(tc.wantCalls, "\n"))
			}
			got := f.svcs[0].svc
			if got.SchedName != "mh" || got.Flags != model.SvcFlagSched1|model.SvcFlagSched2 {
				t.Errorf("service ends as %s flags %#x; want mh 0x18", got.SchedName, got.Flags)
			}
			if order := f.order("203.0.113.10:80/6"); !slices.Equal(order, []string{"198.18.2.2 w1", "198.18.2.3 w1", "198.18.2.4 w0"}) {
				t.Errorf("list = %v", order)
			}
			f.calls = nil
			if res, _ := d.Reconcile(ctx, desired(web)); res.Writes != 0 {
				t.Errorf("resync after staged create wrote %d: %v", res.Writes, f.calls)
			}
		})
	}
}
