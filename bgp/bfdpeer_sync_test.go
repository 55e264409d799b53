package bgp

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tlbproject/tlb/bgp/bfd"
)

// bfdRouter is the router's side of a BFD session with the speaker, on
// loopback: a bfd.Endpoint of its own that records what it goes through.
type bfdRouter struct {
	s   *bfd.Session
	mu  sync.Mutex
	trs []bfd.Transition
}

func (r *bfdRouter) add(tr bfd.Transition) { r.mu.Lock(); r.trs = append(r.trs, tr); r.mu.Unlock() }

// wait waits until the router's session is in state want and its last
// change satisfies ok (nil: any).
func (r *bfdRouter) wait(t *testing.T, what string, want bfd.State, ok func(bfd.Transition) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		var last bfd.Transition
		if len(r.trs) > 0 {
			last = r.trs[len(r.trs)-1]
		}
		r.mu.Unlock()
		if r.s.State() == want && (ok == nil || ok(last)) {
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("%s: router's bfd session is %v after %+v, want %v", what, r.s.State(), r.trs, want)
}

// udpPort returns a UDP port free on loopback, for both BFD endpoints.
func udpPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// TestBFDFollowsPeersAtRunTime: a peer given BFD while the speaker runs
// gets a session that comes Up with the router; a bad bfd value is
// refused naming the peer and field, and the session stays as it was;
// the peer removed closes its session, the router hearing AdminDown (not
// a failure) and the metrics going; re-added, a new session comes Up.
func TestBFDFollowsPeersAtRunTime(t *testing.T) {
	ctx := context.Background()
	port := udpPort(t)
	rcv := newReceiver(t)
	cfg := testConfig(rcv)
	cfg.Peers[0].Name = "BGPPeer tor"
	plain := cfg.Peers[0]
	withBFD := plain
	withBFD.BFD = BFDConfig{Enabled: true, MinRxMilliseconds: 20, MinTxMilliseconds: 20, Multiplier: 3}
	s, err := NewSpeaker(cfg, testLogger(t), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	s.bfd.endpointOpts = []bfd.EndpointOption{bfd.WithPort(port)}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(ctx) })
	waitEstablished(t, s)
	if got := s.BFD(); len(got) != 0 {
		t.Fatalf("bfd sessions of a peer without bfd: %+v", got)
	}

	e := bfd.NewEndpoint(testLogger(t), bfd.WithPort(port))
	t.Cleanup(e.Close)
	router := &bfdRouter{}
	router.s, err = e.Open(bfd.SessionConfig{
		Peer: netip.MustParseAddr(speakerAddr), Local: netip.MustParseAddr(receiverAddr),
		Timing: bfd.Timing{DesiredMinTx: 20 * time.Millisecond, RequiredMinRx: 20 * time.Millisecond, DetectMult: 3}, OnChange: router.add,
	})
	if err != nil {
		t.Fatal(err)
	}

	setPeers(t, s, withBFD)
	router.wait(t, "bfd added at run time", bfd.Up, nil)
	waitSpeaker(t, "the speaker's session Up", func() bool { b := s.BFD(); return len(b) == 1 && b[0].State == bfd.Up })
	before := s.BFD()[0].Transitions

	bad := withBFD
	bad.BFD.MinRxMilliseconds = 5
	err = s.SetPeers(ctx, []PeerConfig{bad})
	if err == nil || !strings.Contains(err.Error(), "peer BGPPeer tor: bfd.minRxMilliseconds") {
		t.Fatalf("a 5 ms minRx: err %v, want it refused naming peer BGPPeer tor and bfd.minRxMilliseconds", err)
	}
	if b := s.BFD(); len(b) != 1 || b[0].State != bfd.Up || b[0].Transitions != before || router.s.State() != bfd.Up {
		t.Fatalf("after the refused change: speaker %+v (%d changes before), router %v", b, before, router.s.State())
	}

	setPeers(t, s)
	router.wait(t, "peer removed", bfd.Down, func(tr bfd.Transition) bool { return tr.Diag == bfd.DiagNeighborDown })
	if b := s.BFD(); len(b) != 0 {
		t.Fatalf("bfd sessions after the peer was removed: %+v", b)
	}
	if n := testutil.CollectAndCount(s.bfd.state) + testutil.CollectAndCount(s.bfd.transitions); n != 0 {
		t.Errorf("%d bfd series left for the removed peer", n)
	}

	setPeers(t, s, withBFD)
	router.wait(t, "peer added again", bfd.Up, nil)
	waitSpeaker(t, "the speaker's new session Up", func() bool { b := s.BFD(); return len(b) == 1 && b[0].State == bfd.Up })

	setPeers(t, s, plain) // bfd turned off on a kept peer: its session closes too
	router.wait(t, "bfd turned off", bfd.Down, func(tr bfd.Transition) bool { return tr.Diag == bfd.DiagNeighborDown })
	if b := s.BFD(); len(b) != 0 {
		t.Fatalf("bfd sessions after bfd was turned off: %+v", b)
	}
}

func setPeers(t *testing.T, s *Speaker, peers ...PeerConfig) {
	t.Helper()
	if err := s.SetPeers(context.Background(), peers); err != nil {
		t.Fatal(err)
	}
}

func waitSpeaker(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestBFDOpenFailureLeavesPeerOut: a BFD session that cannot open (its
// local address is not on the host) fails SetPeers naming the peer and
// leaves the peer out of GoBGP, so the next SetPeers tries it again
// instead of keeping a peer without its BFD session.
func TestBFDOpenFailureLeavesPeerOut(t *testing.T) {
	rcv := newReceiver(t)
	cfg := testConfig(rcv)
	s, err := NewSpeaker(cfg, testLogger(t), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	s.bfd.endpointOpts = []bfd.EndpointOption{bfd.WithPort(udpPort(t))}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	far := PeerConfig{Address: "127.0.0.3", ASN: receiverASN, LocalAddress: "192.0.2.55",
		BFD: BFDConfig{Enabled: true}}
	err = s.SetPeers(context.Background(), []PeerConfig{cfg.Peers[0], far})
	if err == nil || !strings.Contains(err.Error(), "start bfd with peer 127.0.0.3") {
		t.Fatalf("SetPeers with an unusable local address: err %v, want the bfd session's failure", err)
	}
	s.mu.Lock()
	_, inGoBGP := s.active["127.0.0.3"]
	s.mu.Unlock()
	if inGoBGP || len(s.BFD()) != 0 {
		t.Fatalf("after the failure: peer in GoBGP %v, bfd sessions %+v", inGoBGP, s.BFD())
	}
	if n := testutil.CollectAndCount(s.bfd.state); n != 0 {
		t.Errorf("%d bfd state series left for the peer that failed", n)
	}
}
