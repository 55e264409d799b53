package bfd

import (
	"math/rand/v2"
	"testing"
	"time"
)

var fast = Timing{DesiredMinTx: 100 * time.Millisecond, RequiredMinRx: 100 * time.Millisecond, DetectMult: 3}

// wire joins two machines on a fake clock: packets arrive at once unless
// the wire is cut, and every packet and state change is recorded.
type wire struct {
	t       *testing.T
	now     time.Time
	a, b    *Machine
	cut     bool
	sent    map[*Machine][]Packet
	changes map[*Machine][]Transition
	at      map[*Machine][]time.Time
}

func newWire(t *testing.T, ta, tb Timing) *wire {
	t0 := time.Unix(1000, 0)
	rnd := rand.New(rand.NewPCG(1, 2))
	return &wire{t: t, now: t0,
		a: NewMachine(ta, 11, t0, rnd.Float64), b: NewMachine(tb, 22, t0, rnd.Float64),
		sent: map[*Machine][]Packet{}, changes: map[*Machine][]Transition{}, at: map[*Machine][]time.Time{},
	}
}

func (w *wire) other(m *Machine) *Machine {
	if m == w.a {
		return w.b
	}
	return w.a
}

func (w *wire) record(m *Machine, tr Transition, ok bool) {
	if ok {
		w.changes[m] = append(w.changes[m], tr)
		w.at[m] = append(w.at[m], w.now)
	}
}

// flush sends what m has due and lets the other side answer.
func (w *wire) flush(m *Machine) {
	for p, ok := m.Due(w.now); ok; p, ok = m.Due(w.now) {
		w.sent[m] = append(w.sent[m], p)
		if w.cut {
			continue
		}
		to := w.other(m)
		tr, changed := to.Receive(w.now, p)
		w.record(to, tr, changed)
		w.flush(to)
	}
}

// run advances the fake clock event by event until d has passed.
func (w *wire) run(d time.Duration) {
	until := w.now.Add(d)
	for {
		next := until
		for _, m := range []*Machine{w.a, w.b} {
			if at, ok := m.Next(); ok && at.Before(next) {
				next = at
			}
		}
		if next.After(w.now) {
			w.now = next
		}
		for _, m := range []*Machine{w.a, w.b} {
			tr, ok := m.Advance(w.now)
			w.record(m, tr, ok)
			w.flush(m)
		}
		if !w.now.Before(until) {
			return
		}
	}
}

func TestMachineComesUpAndSpeedsUp(t *testing.T) {
	w := newWire(t, fast, fast)
	w.run(3 * time.Second)
	if w.a.State() != Up || w.b.State() != Up {
		t.Fatalf("states after 3s: %v %v, want up up; changes a=%v b=%v", w.a.State(), w.b.State(), w.changes[w.a], w.changes[w.b])
	}
	if n := len(w.changes[w.a]) + len(w.changes[w.b]); n > 3 {
		t.Errorf("%d state changes to come up, want at most 3 (down->init->up, down->up)", n)
	}
	// The poll sequence that announced the fast pace ended.
	if p := w.a.packet(); p.Poll || p.DesiredMinTx != fast.DesiredMinTx {
		t.Errorf("a's packet after coming up: %+v, want the fast interval and no poll", p)
	}
	before := len(w.sent[w.a])
	w.run(time.Second)
	// 100 ms less up to 25 % jitter: 10 to 14 packets a second.
	if n := len(w.sent[w.a]) - before; n < 10 || n > 14 {
		t.Errorf("a sent %d packets in a second once Up, want 10-14", n)
	}
	if got := w.a.DetectionTime(); got != 300*time.Millisecond {
		t.Errorf("detection time %v, want 3 x 100ms", got)
	}
}

func TestMachineDetectsCutWithinDetectionTime(t *testing.T) {
	w := newWire(t, fast, fast)
	w.run(3 * time.Second)
	w.cut = true
	cutAt := w.now
	w.run(2 * time.Second)
	for name, m := range map[string]*Machine{"a": w.a, "b": w.b} {
		if m.State() != Down || m.Diag() != DiagDetectionTimeExpired {
			t.Fatalf("%s after cut: %v (%v), want down (detection time expired)", name, m.State(), m.Diag())
		}
		last := w.at[m][len(w.at[m])-1]
		if took := last.Sub(cutAt); took > 300*time.Millisecond || took <= 200*time.Millisecond {
			t.Errorf("%s went down %v after the cut, want within (200ms, 300ms]", name, took)
		}
	}
	// Down, it falls back to at most one packet a second.
	before := len(w.sent[w.a])
	w.run(4 * time.Second)
	if n := len(w.sent[w.a]) - before; n > 6 {
		t.Errorf("a sent %d packets in 4s while Down, want at most one a second (plus jitter)", n)
	}
	if p := w.a.packet(); p.DesiredMinTx != SlowTx || p.YourDiscr != 0 {
		t.Errorf("a's packet while down: %+v, want DesiredMinTx 1s and the peer forgotten", p)
	}
	w.cut = false
	w.run(3 * time.Second)
	if w.a.State() != Up || w.b.State() != Up {
		t.Errorf("after the wire heals: %v %v, want up up", w.a.State(), w.b.State())
	}
}

func TestMachinePeerAdminDownIsNeighborDown(t *testing.T) {
	w := newWire(t, fast, fast)
	w.run(3 * time.Second)
	tr, p := w.b.Shutdown()
	if tr.To != AdminDown || p.State != AdminDown || p.Diag != DiagAdminDown {
		t.Fatalf("shutdown: %+v %+v", tr, p)
	}
	got, ok := w.a.Receive(w.now, p)
	if !ok || got != (Transition{From: Up, To: Down, Diag: DiagNeighborDown}) {
		t.Errorf("a on the peer's admin down: %+v %v", got, ok)
	}
	// An AdminDown session ignores what arrives.
	if _, ok := w.b.Receive(w.now, w.a.packet()); ok || w.b.State() != AdminDown {
		t.Errorf("admin down session changed on a packet: %v", w.b.State())
	}
}

func TestMachineIgnoresForeignDiscriminator(t *testing.T) {
	m := NewMachine(fast, 5, time.Unix(0, 0), func() float64 { return 0 })
	p := Packet{State: Init, DetectMult: 3, MyDiscr: 9, YourDiscr: 6, DesiredMinTx: time.Second, RequiredMinRx: time.Second}
	if _, ok := m.Receive(time.Unix(0, 0), p); ok || m.State() != Down {
		t.Errorf("packet for discriminator 6 moved session 5 to %v", m.State())
	}
	p.YourDiscr = 5
	if tr, ok := m.Receive(time.Unix(0, 0), p); !ok || tr.To != Up {
		t.Errorf("Init for us from Down: %+v %v, want up", tr, ok)
	}
}

func TestMachineAnswersPollWithFinal(t *testing.T) {
	m := NewMachine(fast, 5, time.Unix(0, 0), func() float64 { return 0 })
	m.Due(time.Unix(0, 0))
	m.Receive(time.Unix(0, 0), Packet{State: Down, Poll: true, DetectMult: 3, MyDiscr: 9, DesiredMinTx: time.Second, RequiredMinRx: time.Second})
	p, ok := m.Due(time.Unix(0, 0))
	if !ok || !p.Final || p.Poll || p.State != Init || p.YourDiscr != 9 {
		t.Errorf("answer to a poll: %+v %v, want Final, Init, your discriminator 9", p, ok)
	}
}

func TestMachineJitter(t *testing.T) {
	for _, tc := range []struct {
		mult     uint8
		jit      float64
		wantNext time.Duration
	}{
		{3, 0, 1000 * time.Millisecond},
		{3, 0.999, 750 * time.Millisecond},
		{1, 0, 900 * time.Millisecond},
		{1, 0.999, 750 * time.Millisecond},
	} {
		tm := fast
		tm.DetectMult = tc.mult
		m := NewMachine(tm, 5, time.Unix(0, 0), func() float64 { return tc.jit })
		m.Due(time.Unix(0, 0))
		at, _ := m.Next()
		if d := at.Sub(time.Unix(0, 0)).Round(time.Millisecond); d != tc.wantNext {
			t.Errorf("mult %d jitter %v: next packet after %v, want %v", tc.mult, tc.jit, d, tc.wantNext)
		}
	}
}

func TestMachineRemoteMinRxZeroStopsPeriodic(t *testing.T) {
	m := NewMachine(fast, 5, time.Unix(0, 0), func() float64 { return 0 })
	m.Due(time.Unix(0, 0))
	m.Receive(time.Unix(0, 0), Packet{State: Down, DetectMult: 3, MyDiscr: 9, DesiredMinTx: time.Second})
	m.Due(time.Unix(0, 0)) // the news of Init
	if _, ok := m.Due(time.Unix(5, 0)); ok {
		t.Error("sent a periodic packet to a peer whose RequiredMinRx is 0")
	}
}
