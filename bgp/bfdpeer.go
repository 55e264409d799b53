package bgp

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/bgp/bfd"
)

// peerSwitch is the part of GoBGP that shuts and reopens a peer's
// session. *server.BgpServer implements it; tests fake it.
type peerSwitch interface {
	DisablePeer(context.Context, *api.DisablePeerRequest) error
	EnablePeer(context.Context, *api.EnablePeerRequest) error
}

// bfdPeers runs one BFD session per peer in GoBGP that enables it,
// opened and closed with the peer (Speaker.syncPeersLocked). When a
// session that was Up goes Down, the path to the peer is lost: the BGP
// session is shut (GoBGP DisablePeer) until BFD is Up again, so the
// director stops counting on a router it cannot reach, as the router
// stops counting on it.
type bfdPeers struct {
	log *slog.Logger

	state       *prometheus.GaugeVec
	transitions *prometheus.CounterVec

	// endpointOpts are how start builds the endpoint: none but in tests,
	// which move it off port 3784.
	endpointOpts []bfd.EndpointOption

	mu       sync.Mutex
	peers    []PeerConfig // those with an open session, in the order opened
	endpoint *bfd.Endpoint
	sw       peerSwitch
	sessions map[string]*bfd.Session
	cancels  map[string]context.CancelFunc // each session's gate follower
	wg       sync.WaitGroup
}

// newBFDPeers registers the BFD metrics on reg (nil: none). It opens no
// socket.
func newBFDPeers(log *slog.Logger, reg prometheus.Registerer) (*bfdPeers, error) {
	b := &bfdPeers{
		log: log,
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tlb_bfd_session_state",
			Help: "1 for the BFD state (admindown, down, init, up) the session with the BGP peer is in, 0 for the others.",
		}, []string{"peer", "state"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tlb_bfd_session_transitions_total",
			Help: "BFD state changes of the session with the BGP peer; a rising count is a flapping path.",
		}, []string{"peer"}),
		sessions: map[string]*bfd.Session{},
		cancels:  map[string]context.CancelFunc{},
	}
	if reg == nil {
		return b, nil
	}
	for _, c := range []prometheus.Collector{b.state, b.transitions} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register bfd metrics: %w", err)
		}
	}
	return b, nil
}

func (b *bfdPeers) setState(peer string, st bfd.State) {
	for _, s := range bfd.States {
		v := 0.0
		if s == st {
			v = 1
		}
		b.state.WithLabelValues(peer, s.String()).Set(v)
	}
}

// start readies the endpoint; each peer's BGP session is switched through
// sw. Sessions open with open.
func (b *bfdPeers) start(sw peerSwitch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endpoint, b.sw = bfd.NewEndpoint(b.log, b.endpointOpts...), sw
}

// open starts the BFD session of a validated peer that enables it; it
// does nothing for one that does not, or before start, or after stop.
func (b *bfdPeers) open(p PeerConfig) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !p.BFD.Enabled || b.endpoint == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	gate := make(chan bool, 1)
	var local netip.Addr
	if p.LocalAddress != "" {
		local = netip.MustParseAddr(p.LocalAddress)
	}
	b.setState(p.Address, bfd.Down)
	b.transitions.WithLabelValues(p.Address)
	s, err := b.endpoint.Open(bfd.SessionConfig{
		Peer: netip.MustParseAddr(p.Address), Local: local, Timing: p.BFD.timing(),
		OnChange: func(tr bfd.Transition) { b.changed(p.Address, tr, gate) },
	})
	if err != nil {
		cancel()
		b.state.DeletePartialMatch(prometheus.Labels{"peer": p.Address})
		b.transitions.DeleteLabelValues(p.Address)
		return fmt.Errorf("start bfd with peer %s: %w", p.Address, err)
	}
	b.wg.Add(1)
	go b.follow(ctx, b.sw, p.Address, gate)
	b.sessions[p.Address], b.cancels[p.Address] = s, cancel
	b.peers = append(b.peers, p)
	b.log.Info("bfd session opened", "peer", p.Address, "minTx", p.BFD.MinTxMilliseconds, "minRx", p.BFD.MinRxMilliseconds, "multiplier", p.BFD.Multiplier)
	return nil
}

// close stops the BFD session with the peer at addr, if any (telling it
// AdminDown), and drops its metrics.
func (b *bfdPeers) close(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cancel, ok := b.cancels[addr]
	if !ok || b.endpoint == nil {
		return
	}
	b.endpoint.CloseSession(netip.MustParseAddr(addr))
	cancel()
	delete(b.sessions, addr)
	delete(b.cancels, addr)
	b.peers = slices.DeleteFunc(b.peers, func(p PeerConfig) bool { return p.Address == addr })
	b.state.DeletePartialMatch(prometheus.Labels{"peer": addr})
	b.transitions.DeleteLabelValues(addr)
	b.log.Info("bfd session closed", "peer", addr)
}

// changed records a state change and tells the peer's gate whether the
// BGP session may run: shut when an Up session goes Down, open on Up.
func (b *bfdPeers) changed(peer string, tr bfd.Transition, gate chan bool) {
	b.setState(peer, tr.To)
	b.transitions.WithLabelValues(peer).Inc()
	var open bool
	switch {
	case tr.To == bfd.Up:
		open = true
	case tr.From == bfd.Up:
		b.log.Warn("bfd lost the path to the peer; shutting its bgp session", "peer", peer, "diag", tr.Diag)
	default:
		return
	}
	select { // keep only the newest wish
	case <-gate:
	default:
	}
	gate <- open
}

// follow applies a peer's gate to GoBGP, one call per change, until ctx ends.
func (b *bfdPeers) follow(ctx context.Context, sw peerSwitch, peer string, gate <-chan bool) {
	defer b.wg.Done()
	shut := false
	for {
		select {
		case <-ctx.Done():
			return
		case open := <-gate:
			if open == !shut {
				continue
			}
			var err error
			if open {
				err = sw.EnablePeer(ctx, &api.EnablePeerRequest{Address: peer})
			} else {
				err = sw.DisablePeer(ctx, &api.DisablePeerRequest{Address: peer, Communication: "BFD session down"})
			}
			if err != nil {
				b.log.Error("switch bgp peer after bfd change", "peer", peer, "open", open, "err", err)
				continue
			}
			shut = !open
		}
	}
}

// stop closes the sessions (telling each peer AdminDown, which a router
// does not take for a failure) and waits for the gates to stop.
func (b *bfdPeers) stop() {
	b.mu.Lock()
	e, cancels, peers := b.endpoint, b.cancels, b.peers
	b.endpoint, b.cancels, b.peers = nil, map[string]context.CancelFunc{}, nil
	clear(b.sessions)
	b.mu.Unlock()
	if e == nil {
		return
	}
	e.Close()
	for _, cancel := range cancels {
		cancel()
	}
	b.wg.Wait()
	for _, p := range peers {
		b.setState(p.Address, bfd.AdminDown)
	}
}

// BFDStatus is the BFD session with one peer.
type BFDStatus struct {
	// Peer is the peer's address.
	Peer string
	// State is the session's state.
	State bfd.State
	// Transitions counts its state changes since the speaker started.
	Transitions uint64
}

// BFD returns the BFD sessions of the peers in GoBGP that enable it, in
// the order they were opened; empty before Start and after Stop.
func (s *Speaker) BFD() []BFDStatus {
	b := s.bfd
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []BFDStatus
	for _, p := range b.peers {
		if ss := b.sessions[p.Address]; ss != nil && b.endpoint != nil {
			out = append(out, BFDStatus{Peer: p.Address, State: ss.State(), Transitions: ss.Transitions()})
		}
	}
	return out
}
