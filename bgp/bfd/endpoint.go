package bfd

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"

	"golang.org/x/net/ipv4"
)

// Endpoint owns a set of sessions and the sockets they receive on: one
// per local address (port 3784), shared by the sessions on it, which
// hands each packet to its session by discriminator or, for a first
// packet, by the peer's address.
type Endpoint struct {
	log   *slog.Logger
	clock Clock
	port  int

	mu        sync.Mutex
	rnd       *rand.Rand
	closed    bool
	receivers map[netip.Addr]*ipv4.PacketConn
	byDiscr   map[uint32]*Session
	byPeer    map[netip.Addr]*Session
	wg        sync.WaitGroup
}

// EndpointOption changes how NewEndpoint builds an Endpoint.
type EndpointOption func(*Endpoint)

// WithClock runs the sessions on clock instead of the wall clock.
func WithClock(clock Clock) EndpointOption { return func(e *Endpoint) { e.clock = clock } }

// WithPort sends to and receives on port instead of 3784 (tests that run
// unprivileged or side by side).
func WithPort(port int) EndpointOption { return func(e *Endpoint) { e.port = port } }

// NewEndpoint returns an Endpoint with no session; it opens no socket yet.
func NewEndpoint(log *slog.Logger, opts ...EndpointOption) *Endpoint {
	e := &Endpoint{
		log: log, clock: realClock{}, port: Port,
		rnd:       rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		receivers: map[netip.Addr]*ipv4.PacketConn{},
		byDiscr:   map[uint32]*Session{},
		byPeer:    map[netip.Addr]*Session{},
	}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Open starts a session with cfg.Peer. One session per peer address.
func (e *Endpoint) Open(cfg SessionConfig) (*Session, error) {
	if !cfg.Peer.Is4() || (cfg.Local.IsValid() && !cfg.Local.Is4()) {
		return nil, fmt.Errorf("open bfd session with %s from %s: only IPv4 is supported", cfg.Peer, cfg.Local)
	}
	if cfg.Timing.DetectMult == 0 || cfg.Timing.DesiredMinTx <= 0 || cfg.Timing.RequiredMinRx <= 0 {
		return nil, fmt.Errorf("open bfd session with %s: timing %+v has a zero field", cfg.Peer, cfg.Timing)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("open bfd session: endpoint closed")
	}
	if _, ok := e.byPeer[cfg.Peer]; ok {
		return nil, fmt.Errorf("open bfd session with %s: already open", cfg.Peer)
	}
	if err := e.receiveOnLocked(cfg.Local); err != nil {
		return nil, err
	}
	tx, err := dialTx(cfg.Local, cfg.Peer, e.port, e.rnd)
	if err != nil {
		return nil, err
	}
	discr := e.rnd.Uint32()
	for discr == 0 || e.byDiscr[discr] != nil {
		discr = e.rnd.Uint32()
	}
	jitter := rand.New(rand.NewPCG(e.rnd.Uint64(), e.rnd.Uint64())).Float64
	m := NewMachine(cfg.Timing, discr, e.clock.Now(), jitter)
	s := runSession(cfg, m, tx, e.clock, e.log)
	e.byDiscr[discr], e.byPeer[cfg.Peer] = s, s
	return s, nil
}

// receiveOnLocked opens the receiver for local unless it is open.
func (e *Endpoint) receiveOnLocked(local netip.Addr) error {
	if _, ok := e.receivers[local]; ok {
		return nil
	}
	pc, err := listenRx(local, e.port)
	if err != nil {
		return err
	}
	e.receivers[local] = pc
	e.wg.Add(1)
	go e.receive(pc)
	return nil
}

// receive reads packets until pc is closed and delivers those that pass
// the TTL check (GTSM) and the packet checks to their session.
func (e *Endpoint) receive(pc *ipv4.PacketConn) {
	defer e.wg.Done()
	buf := make([]byte, 128)
	for {
		n, cm, src, err := pc.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			e.log.Debug("bfd receive failed", "err", err)
			continue
		}
		ua, ok := src.(*net.UDPAddr)
		if !ok || cm == nil || cm.TTL != gtsmTTL {
			continue // not single hop: RFC 5881 section 5 says discard
		}
		p, err := Unmarshal(buf[:n])
		if err != nil {
			e.log.Debug("bfd packet discarded", "from", ua, "err", err)
			continue
		}
		if s := e.session(ua.AddrPort().Addr().Unmap(), p.YourDiscr); s != nil {
			s.deliver(p)
		}
	}
}

// session finds the session a packet from peer belongs to: by our
// discriminator when the peer knows it, else by its address. A packet
// naming a discriminator of another peer's session is dropped.
func (e *Endpoint) session(peer netip.Addr, yourDiscr uint32) *Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	if yourDiscr == 0 {
		return e.byPeer[peer]
	}
	if s := e.byDiscr[yourDiscr]; s != nil && s.peer == peer {
		return s
	}
	return nil
}

// CloseSession stops the session with peer, telling it AdminDown, and
// lets a new one be opened with it; the receive sockets stay. It does
// nothing when no session with peer is open.
func (e *Endpoint) CloseSession(peer netip.Addr) {
	e.mu.Lock()
	s := e.byPeer[peer]
	if s != nil {
		delete(e.byPeer, peer)
		for d, ds := range e.byDiscr {
			if ds == s {
				delete(e.byDiscr, d)
			}
		}
	}
	e.mu.Unlock()
	if s != nil {
		s.close()
	}
}

// Close stops every session (each tells its peer it goes AdminDown) and
// closes the sockets. The Endpoint cannot be used again.
func (e *Endpoint) Close() {
	e.mu.Lock()
	e.closed = true
	sessions := make([]*Session, 0, len(e.byPeer))
	for _, s := range e.byPeer {
		sessions = append(sessions, s)
	}
	clear(e.byPeer)
	clear(e.byDiscr)
	for _, pc := range e.receivers {
		_ = pc.Close()
	}
	clear(e.receivers)
	e.mu.Unlock()
	for _, s := range sessions {
		s.close()
	}
	e.wg.Wait()
}
