package bfd

import (
	"log/slog"
	"net/netip"
	"sync"
	"time"
)

// Clock is the time source a Session runs on; tests pass a fake one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After sends the time on the returned channel once d has passed.
	After(d time.Duration) <-chan time.Time
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sender sends one session's control packets to its peer.
type Sender interface {
	// Send sends one encoded control packet.
	Send(b []byte) error
	// Close releases the sender's socket.
	Close() error
}

// SessionConfig describes one session to open.
type SessionConfig struct {
	// Peer is the directly connected router's address.
	Peer netip.Addr
	// Local is the address to send from and receive on; the zero Addr
	// lets the kernel choose and receives on every address.
	Local netip.Addr
	// Timing is what we ask of the session.
	Timing Timing
	// OnChange, if set, is called after every state change, from the
	// session's goroutine: it must not block for long.
	OnChange func(Transition)
}

// Session is one running BFD session with one peer.
type Session struct {
	peer     netip.Addr
	log      *slog.Logger
	clock    Clock
	tx       Sender
	onChange func(Transition)
	rx       chan Packet
	stop     chan struct{}
	done     chan struct{}

	mu          sync.Mutex // guards m for State and Transitions readers
	m           *Machine
	transitions uint64
}

// runSession starts the goroutine that drives m for peer.
func runSession(cfg SessionConfig, m *Machine, tx Sender, clock Clock, log *slog.Logger) *Session {
	s := &Session{
		peer: cfg.Peer, log: log, clock: clock, tx: tx, onChange: cfg.OnChange, m: m,
		rx: make(chan Packet, 16), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go s.run()
	return s
}

// Peer returns the peer's address.
func (s *Session) Peer() netip.Addr { return s.peer }

// State returns the session's current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.State()
}

// Transitions returns how many times the state changed since the session opened.
func (s *Session) Transitions() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.transitions
}

// deliver hands a received packet to the session, dropping it when the
// session is too far behind (the next one will carry the same news).
func (s *Session) deliver(p Packet) {
	select {
	case s.rx <- p:
	default:
	}
}

// run is the session's loop: packets in, timers, packets out.
func (s *Session) run() {
	defer close(s.done)
	for {
		var wake <-chan time.Time
		s.mu.Lock()
		if at, ok := s.m.Next(); ok {
			wake = s.clock.After(at.Sub(s.clock.Now()))
		}
		s.mu.Unlock()
		select {
		case <-s.stop:
			return
		case p := <-s.rx:
			s.step(func(now time.Time) (Transition, bool) { return s.m.Receive(now, p) })
		case <-wake:
			s.step(s.m.Advance)
		}
	}
}

// step applies one event at the current time, reports a state change and
// sends whatever became due.
func (s *Session) step(event func(time.Time) (Transition, bool)) {
	now := s.clock.Now()
	s.mu.Lock()
	tr, changed := event(now)
	if changed {
		s.transitions++
	}
	var out [][]byte
	for {
		p, ok := s.m.Due(now)
		if !ok {
			break
		}
		out = append(out, p.Marshal())
		if len(out) > 2 { // a state change, a poll answer, one periodic
			break
		}
	}
	s.mu.Unlock()
	for _, b := range out {
		if err := s.tx.Send(b); err != nil {
			s.log.Debug("bfd send failed", "peer", s.peer, "err", err)
		}
	}
	if changed {
		s.log.Info("bfd session state changed", "peer", s.peer, "from", tr.From, "to", tr.To, "diag", tr.Diag)
		if s.onChange != nil {
			s.onChange(tr)
		}
	}
}

// close stops the session, telling the peer it goes AdminDown so that the
// peer does not take it for a failure, and releases its socket. OnChange
// is not called: the owner knows.
func (s *Session) close() {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	_, p := s.m.Shutdown()
	s.transitions++
	s.mu.Unlock()
	if err := s.tx.Send(p.Marshal()); err != nil {
		s.log.Debug("bfd send admin down failed", "peer", s.peer, "err", err)
	}
	if err := s.tx.Close(); err != nil {
		s.log.Debug("bfd close socket", "peer", s.peer, "err", err)
	}
}
