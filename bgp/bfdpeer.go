package bgp

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
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

// bfdPeers runs one BFD session per peer that enables it. When a session
// that was Up goes Down, the path to the peer is lost: the BGP session is
// shut (GoBGP DisablePeer) until BFD is Up again, so the director stops
// counting on a router it cannot reach, as the router stops counting on it.
type bfdPeers struct {
	peers []PeerConfig // those with BFD enabled
	log   *slog.Logger

	state       *prometheus.GaugeVec
	transitions *prometheus.CounterVec

	mu       sync.Mutex
	endpoint *bfd.Endpoint
	sessions map[string]*bfd.Session
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// newBFDPeers registers the BFD metrics on reg (nil: none) for the peers
// of a validated Config that enable BFD. It opens no socket.
func newBFDPeers(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*bfdPeers, error) {
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
	}
	for _, p := range cfg.Peers {
		if p.BFD.Enabled {
			b.peers = append(b.peers, p)
			b.setState(p.Address, bfd.Down)
			b.transitions.WithLabelValues(p.Address)
		}
	}
	if reg == nil || len(b.peers) == 0 {
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

// start opens the sessions; each peer's BGP session is switched through sw.
func (b *bfdPeers) start(sw peerSwitch) error {
	if len(b.peers) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := bfd.NewEndpoint(b.log)
	b.mu.Lock()
	b.endpoint, b.cancel = e, cancel
	b.mu.Unlock()
	for _, p := range b.peers {
		gate := make(chan bool, 1)
		b.wg.Add(1)
		go b.follow(ctx, sw, p.Address, gate)
		var local netip.Addr
		if p.LocalAddress != "" {
			local = netip.MustParseAddr(p.LocalAddress)
		}
		s, err := e.Open(bfd.SessionConfig{
			Peer: netip.MustParseAddr(p.Address), Local: local, Timing: p.BFD.timing(),
			OnChange: func(tr bfd.Transition) { b.changed(p.Address, tr, gate) },
		})
		if err != nil {
			b.stop()
			return fmt.Errorf("start bfd with peer %s: %w", p.Address, err)
		}
		b.mu.Lock()
		b.sessions[p.Address] = s
		b.mu.Unlock()
		b.log.Info("bfd session opened", "peer", p.Address, "minTx", p.BFD.MinTxMilliseconds, "minRx", p.BFD.MinRxMilliseconds, "multiplier", p.BFD.Multiplier)
	}
	return nil
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
	e, cancel := b.endpoint, b.cancel
	b.endpoint, b.cancel = nil, nil
	b.mu.Unlock()
	if e == nil {
		return
	}
	e.Close()
	cancel()
	b.wg.Wait()
	for _, p := range b.peers {
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

// BFD returns the BFD sessions of the peers that enable it, in
// configuration order; empty before Start and after Stop.
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
