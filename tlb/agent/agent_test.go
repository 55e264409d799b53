package agent

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/tlbproject/tlb/tlb/health"
	"github.com/tlbproject/tlb/tlb/model"
)

const (
	rs1 = "198.18.11.2"
	rs2 = "198.18.12.2"
)

var subnet = netip.MustParsePrefix("203.0.113.0/24")

// twoVIPs: 203.0.113.10 on rs1+rs2, 203.0.113.20 on rs2 only.
func twoVIPs() model.Desired {
	rs := func(a string, w int) model.RealServer {
		return model.RealServer{Addr: netip.MustParseAddr(a), Weight: w}
	}
	return model.Desired{VIPRanges: []netip.Prefix{subnet}, Services: []model.Service{
		{VIP: netip.MustParseAddr("203.0.113.10"), Port: 80, Protocol: model.TCP, RealServers: []model.RealServer{rs(rs1, 1), rs(rs2, 3)}},
		{VIP: netip.MustParseAddr("203.0.113.20"), Port: 443, Protocol: model.TCP, RealServers: []model.RealServer{rs(rs2, 1)}},
	}}
}

type rig struct {
	prog    *fakeProgrammer
	ann     *fakeAnnouncer
	health  *fakeHealth
	backend *fakeBackends
	gtm     *fakeGTM
	ready   *fakeReady
	clock   *fakeClock
	updates chan model.Desired
	cancel  context.CancelFunc
	done    chan error
	agent   *Agent
}

func start(t *testing.T, mode string, initial model.Desired, states map[string]health.State, with ...func(*Options)) *rig {
	t.Helper()
	r := &rig{prog: &fakeProgrammer{}, ann: &fakeAnnouncer{calls: make(chan announceCall, 100)},
		health: &fakeHealth{states: map[netip.Addr]health.State{}}, ready: &fakeReady{}, clock: newFakeClock(),
		backend: &fakeBackends{states: map[health.Target]health.State{}}, gtm: &fakeGTM{},
		updates: make(chan model.Desired), done: make(chan error, 1)}
	for rs, s := range states {
		r.health.set(rs, s)
	}
	opts := Options{Programmer: r.prog, Announcer: r.ann, Health: r.health, Backends: r.backend, GTM: r.gtm, Ready: r.ready, AnnounceMode: mode,
		DrainPeriod: 7 * time.Second, Clock: r.clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, w := range with {
		w(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	t.Cleanup(cancel)
	go func() { r.done <- a.Run(ctx, initial, r.updates) }()
	r.agent = a
	return r
}

func weightsOf(d model.Desired) map[string]int {
	w := map[string]int{}
	for _, s := range d.Services {
		for _, rs := range s.RealServers {
			w[s.VIP.String()+">"+rs.Addr.String()] = rs.Weight
		}
	}
	return w
}

func TestNotReadyUntilARealServerIsUp(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), nil)
	if c := r.ann.next(t); len(c.prefixes) != 0 || c.withdrawAll {
		t.Fatalf("first call with every real server unprobed = %+v, want an empty announce", c)
	}
	if ready, reason := r.ready.get(); ready || reason == "" {
		t.Errorf("ready = %v %q, want not ready with a reason", ready, reason)
	}
	r.health.set(rs1, health.Up)
	r.agent.HealthChanged(health.Change{RealServer: netip.MustParseAddr(rs1), State: health.Up})
	if c := r.ann.next(t); !slices.Equal(c.prefixes, []netip.Prefix{subnet}) {
		t.Fatalf("after rs1 came up announced %v, want [%s]", c.prefixes, subnet)
	}
	if ready, _ := r.ready.get(); !ready {
		t.Error("not ready with a healthy real server and IPVS programmed")
	}
	if got := r.health.getProbed(); !slices.Equal(got, []netip.Addr{netip.MustParseAddr(rs1), netip.MustParseAddr(rs2)}) {
		t.Errorf("checker probes %v, want both real servers", got)
	}
}

func TestDownRealServerGetsWeightZeroAndComesBack(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), map[string]health.State{rs1: health.Down, rs2: health.Up})
	r.ann.next(t)
	want := map[string]int{"203.0.113.10>" + rs1: 0, "203.0.113.10>" + rs2: 3, "203.0.113.20>" + rs2: 1}
	if got := weightsOf(r.prog.last()); !mapsEqual(got, want) {
		t.Errorf("programmed weights %v, want %v", got, want)
	}
	if f := r.prog.last().Services[0].Flags; f != nil {
		t.Errorf("flags %v, want nil so mh keeps its default mh-fallback", f)
	}
	r.health.set(rs1, health.Up)
	r.agent.HealthChanged(health.Change{})
	r.ann.next(t)
	if got := weightsOf(r.prog.last())["203.0.113.10>"+rs1]; got != 1 {
		t.Errorf("rs1 back up has weight %d, want its configured 1", got)
	}
}

func TestAllDownWithdrawsAndVIPModeDropsOnlyTheDeadVIP(t *testing.T) {
	tests := map[string]struct {
		mode   string
		states map[string]health.State
		want   []netip.Prefix
		ready  bool
	}{
		"subnets: all down withdraws":      {health.AnnounceSubnets, map[string]health.State{rs1: health.Down, rs2: health.Down}, nil, false},
		"subnets: one up keeps the subnet": {health.AnnounceSubnets, map[string]health.State{rs1: health.Up, rs2: health.Down}, []netip.Prefix{subnet}, true},
		"vips: only the VIP with a healthy real server": {health.AnnounceVIPs, map[string]health.State{rs1: health.Up, rs2: health.Down},
			[]netip.Prefix{netip.MustParsePrefix("203.0.113.10/32")}, true},
		"vips: both": {health.AnnounceVIPs, map[string]health.State{rs1: health.Down, rs2: health.Up},
			[]netip.Prefix{netip.MustParsePrefix("203.0.113.10/32"), netip.MustParsePrefix("203.0.113.20/32")}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := start(t, tc.mode, twoVIPs(), tc.states)
			if c := r.ann.next(t); !slices.Equal(c.prefixes, tc.want) {
				t.Errorf("announced %v, want %v", c.prefixes, tc.want)
			}
			if ready, _ := r.ready.get(); ready != tc.ready {
				t.Errorf("ready = %v, want %v", ready, tc.ready)
			}
		})
	}
}

func TestProgrammingFailureIsNotReadyAndRetried(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), map[string]health.State{rs1: health.Up})
	r.ann.next(t)
	r.prog.setFail(errKernel)
	r.updates <- twoVIPs() // a resync
	if c := r.ann.next(t); len(c.prefixes) != 0 {
		t.Fatalf("announced %v while programming failed, want nothing", c.prefixes)
	}
	if ready, reason := r.ready.get(); ready || reason == "" {
		t.Errorf("ready = %v %q after a failed program, want not ready with the reason", ready, reason)
	}
	if d := <-r.clock.asked; d != DefaultRetryInterval {
		t.Errorf("retry timer %v, want %v", d, DefaultRetryInterval)
	}
	r.prog.setFail(nil)
	r.clock.fire <- time.Now()
	if c := r.ann.next(t); !slices.Equal(c.prefixes, []netip.Prefix{subnet}) {
		t.Errorf("after the retry succeeded announced %v, want [%s]", c.prefixes, subnet)
	}
}

func TestShutdownWithdrawsThenDrainsWithIPVSInPlace(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), map[string]health.State{rs1: health.Up})
	r.ann.next(t)
	programmed := r.prog.calls()
	r.cancel()
	if c := r.ann.next(t); !c.withdrawAll {
		t.Fatalf("first call after shutdown = %+v, want WithdrawAll", c)
	}
	if ready, _ := r.ready.get(); ready {
		t.Error("still ready while draining")
	}
	if d := <-r.clock.asked; d != 7*time.Second {
		t.Errorf("drain timer %v, want the configured 7s", d)
	}
	select {
	case err := <-r.done:
		t.Fatalf("Run returned (%v) before the drain period ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	r.clock.fire <- time.Now()
	if err := <-r.done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if n := r.prog.calls(); n != programmed {
		t.Errorf("data path programmed %d more times during shutdown, want none (IPVS stays)", n-programmed)
	}
}

// TestShutdownKeepsRoutesForGracefulRestart: with graceful restart the
// director neither withdraws nor drains, so the routers keep its routes.
func TestShutdownKeepsRoutesForGracefulRestart(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), map[string]health.State{rs1: health.Up},
		func(o *Options) { o.KeepRoutesOnShutdown = true })
	r.ann.next(t)
	r.cancel()
	if err := <-r.done; err != nil {
		t.Errorf("Run = %v", err)
	}
	select {
	case c := <-r.ann.calls:
		t.Errorf("announcer called on a graceful shutdown: %+v, want nothing", c)
	default:
	}
	select {
	case d := <-r.clock.asked:
		t.Errorf("drain timer %v asked on a graceful shutdown, want none", d)
	default:
	}
	if ready, _ := r.ready.get(); ready {
		t.Error("still ready after shutdown")
	}
}

func TestConfigUpdateChangesTheAnnouncedSet(t *testing.T) {
	r := start(t, health.AnnounceSubnets, twoVIPs(), map[string]health.State{rs1: health.Up, rs2: health.Up})
	r.ann.next(t)
	other := netip.MustParsePrefix("198.51.100.0/24")
	d := twoVIPs()
	d.VIPRanges = append(d.VIPRanges, other)
	d.Services[1].VIP = netip.MustParseAddr("198.51.100.20")
	r.updates <- d
	if c := r.ann.next(t); !slices.Equal(c.prefixes, []netip.Prefix{other, subnet}) {
		t.Errorf("announced %v, want both subnets", c.prefixes)
	}
}

func TestEffectiveLeavesTheInputAlone(t *testing.T) {
	in := twoVIPs()
	out := Effective(in, func(netip.Addr) health.State { return health.Down })
	if in.Services[0].RealServers[0].Weight != 1 || out.Services[0].RealServers[0].Weight != 0 {
		t.Errorf("input weight %d, output %d; want 1 and 0", in.Services[0].RealServers[0].Weight, out.Services[0].RealServers[0].Weight)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
