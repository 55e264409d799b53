package bfd

import (
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
)

// freePort returns a UDP port free on loopback, for two endpoints to share.
func freePort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// recorder keeps the transitions a session reports.
type recorder struct {
	mu  sync.Mutex
	trs []Transition
}

func (r *recorder) add(tr Transition) { r.mu.Lock(); r.trs = append(r.trs, tr); r.mu.Unlock() }
func (r *recorder) get() []Transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.trs)
}

func waitState(t *testing.T, s *Session, want State) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if s.State() == want {
			return
		}
	}
	t.Fatalf("session with %s is %v, want %v", s.Peer(), s.State(), want)
}

var (
	lo1 = netip.MustParseAddr("127.0.0.1")
	lo2 = netip.MustParseAddr("127.0.0.2")
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestEndpointsComeUpOverUDP: two endpoints on loopback come Up; when one
// closes, the other hears AdminDown and goes Down (neighbor down).
func TestEndpointsComeUpOverUDP(t *testing.T) {
	port := freePort(t)
	ea, eb := NewEndpoint(quiet(), WithPort(port)), NewEndpoint(quiet(), WithPort(port))
	defer ea.Close()
	var ra recorder
	a, err := ea.Open(SessionConfig{Peer: lo2, Local: lo1, Timing: fast, OnChange: ra.add})
	if err != nil {
		t.Fatal(err)
	}
	b, err := eb.Open(SessionConfig{Peer: lo1, Local: lo2, Timing: fast})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, a, Up)
	waitState(t, b, Up)
	if _, err := ea.Open(SessionConfig{Peer: lo2, Local: lo1, Timing: fast}); err == nil {
		t.Error("a second session with the same peer was opened")
	}
	eb.Close()
	waitState(t, a, Down)
	trs := ra.get()
	if last := trs[len(trs)-1]; last != (Transition{From: Up, To: Down, Diag: DiagNeighborDown}) {
		t.Errorf("last transition %+v, want up->down (neighbor signaled down); all %v", last, trs)
	}
	if a.Transitions() != uint64(len(trs)) {
		t.Errorf("Transitions() = %d, recorded %d", a.Transitions(), len(trs))
	}
}

// TestEndpointCloseSession: closing one session tells its peer AdminDown
// (the peer goes Down, neighbor signaled down) and leaves the endpoint
// open: a new session with the same peer comes Up again.
func TestEndpointCloseSession(t *testing.T) {
	port := freePort(t)
	ea, eb := NewEndpoint(quiet(), WithPort(port)), NewEndpoint(quiet(), WithPort(port))
	defer ea.Close()
	defer eb.Close()
	var rb recorder
	b, err := eb.Open(SessionConfig{Peer: lo1, Local: lo2, Timing: fast, OnChange: rb.add})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ea.Open(SessionConfig{Peer: lo2, Local: lo1, Timing: fast})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, b, Up)
	ea.CloseSession(lo2)
	ea.CloseSession(lo2) // a second close does nothing
	waitState(t, b, Down)
	heard := func() bool {
		trs := rb.get()
		return trs[len(trs)-1] == (Transition{From: Up, To: Down, Diag: DiagNeighborDown})
	}
	for deadline := time.Now().Add(10 * time.Second); !heard() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // OnChange runs just after the state changes
	}
	if !heard() {
		t.Errorf("peer's transitions %v, want the last up->down (neighbor signaled down)", rb.get())
	}
	if a.State() != AdminDown {
		t.Errorf("closed session is %v, want AdminDown", a.State())
	}
	a2, err := ea.Open(SessionConfig{Peer: lo2, Local: lo1, Timing: fast})
	if err != nil {
		t.Fatalf("reopen after CloseSession: %v", err)
	}
	waitState(t, a2, Up)
	waitState(t, b, Up)
}

// TestEndpointSingleHopRules: packets leave with TTL 255 from a port in
// 49152-65535; a packet arriving with another TTL is discarded (GTSM).
func TestEndpointSingleHopRules(t *testing.T) {
	port := freePort(t)
	peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: lo2.AsSlice(), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	pc := ipv4.NewPacketConn(peer)
	if err := pc.SetControlMessage(ipv4.FlagTTL, true); err != nil {
		t.Fatal(err)
	}
	e := NewEndpoint(quiet(), WithPort(port))
	defer e.Close()
	var rec recorder
	s, err := e.Open(SessionConfig{Peer: lo2, Local: lo1, Timing: fast, OnChange: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	_ = peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, cm, src, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	sport := src.(*net.UDPAddr).Port
	if cm.TTL != 255 || sport < 49152 || sport > 65535 {
		t.Errorf("packet from port %d with ttl %d, want 49152-65535 and 255", sport, cm.TTL)
	}
	first, err := Unmarshal(buf[:n])
	if err != nil || first.State != Down || first.DesiredMinTx != SlowTx {
		t.Fatalf("first packet %+v (%v), want Down at the slow pace", first, err)
	}
	to := &net.UDPAddr{IP: lo1.AsSlice(), Port: port}
	send := func(ttl int, p Packet) {
		t.Helper()
		if err := pc.SetTTL(ttl); err != nil {
			t.Fatal(err)
		}
		if _, err := pc.WriteTo(p.Marshal(), nil, to); err != nil {
			t.Fatal(err)
		}
	}
	// Sent with TTL 64, this would bring the session straight Up.
	send(64, Packet{State: Init, DetectMult: 3, MyDiscr: 77, YourDiscr: first.MyDiscr, DesiredMinTx: time.Second, RequiredMinRx: time.Second})
	send(255, Packet{State: Down, DetectMult: 3, MyDiscr: 78, DesiredMinTx: time.Second, RequiredMinRx: time.Second})
	waitState(t, s, Init)
	if trs := rec.get(); !slices.Equal(trs, []Transition{{From: Down, To: Init}}) {
		t.Errorf("transitions %v, want only down->init from the TTL 255 packet", trs)
	}
}
