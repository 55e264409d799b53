package bfd

import "time"

// Timing is what one side of a session asks for: how fast it wants to
// send, how fast it accepts packets, and after how many missed packets
// the other side must declare the path lost.
type Timing struct {
	// DesiredMinTx is the fastest this side wants to send once Up.
	DesiredMinTx time.Duration
	// RequiredMinRx is the fastest this side accepts packets.
	RequiredMinRx time.Duration
	// DetectMult is how many intervals may pass without a packet.
	DetectMult uint8
}

// SlowTx is the slowest pace a session sends at: while it is not Up its
// desired transmit interval is at least this (RFC 5880 section 6.8.3).
const SlowTx = time.Second

// Transition is one change of a session's state.
type Transition struct {
	// From and To are the states before and after.
	From, To State
	// Diag is the local diagnostic after the change: why the session went down.
	Diag Diag
}

// Machine is the state machine of one asynchronous-mode session (RFC 5880
// section 6.8). It does no I/O and reads no clock: callers hand it the
// current time with every event, ask it when it next needs them (Next),
// and send what Due returns.
type Machine struct {
	timing  Timing
	myDiscr uint32
	jitter  func() float64 // in [0, 1), to spread transmissions

	state       State
	diag        Diag
	remoteDiscr uint32
	remoteMinRx time.Duration // initialised to 1µs: send until told otherwise
	remoteTx    time.Duration // the peer's DesiredMinTx, for its detection time
	remoteMult  uint8
	desiredTx   time.Duration // what we advertise now: SlowTx until Up
	polling     bool          // our packets carry P until the peer answers F
	owesFinal   bool          // the peer polled; answer with F at once
	sendNow     bool          // a state change to tell at once
	nextTx      time.Time
	detectAt    time.Time // zero while no packet is expected
}

// NewMachine returns a session in state Down with discriminator myDiscr
// (nonzero, unique among the caller's sessions), due to send at now.
// jitter returns a number in [0, 1); it spreads transmissions by up to
// 25 % as RFC 5880 section 6.8.7 asks.
func NewMachine(t Timing, myDiscr uint32, now time.Time, jitter func() float64) *Machine {
	return &Machine{
		timing: t, myDiscr: myDiscr, jitter: jitter,
		state: Down, remoteMinRx: time.Microsecond,
		desiredTx: max(t.DesiredMinTx, SlowTx), nextTx: now,
	}
}

// State returns the session state.
func (m *Machine) State() State { return m.state }

// Diag returns the local diagnostic.
func (m *Machine) Diag() Diag { return m.diag }

// Discriminator returns this session's discriminator.
func (m *Machine) Discriminator() uint32 { return m.myDiscr }

// DetectionTime is how long this side waits for a packet before it
// declares the session down: the peer's multiplier times the slower of
// our RequiredMinRx and the peer's DesiredMinTx.
func (m *Machine) DetectionTime() time.Duration {
	return time.Duration(m.remoteMult) * max(m.timing.RequiredMinRx, m.remoteTx)
}

// txInterval is the pace we send at: our desired interval, slowed down to
// what the peer accepts. Zero means the peer wants no periodic packets.
func (m *Machine) txInterval() time.Duration {
	if m.remoteMinRx == 0 {
		return 0
	}
	return max(m.desiredTx, m.remoteMinRx)
}

// jittered returns the next gap before a periodic packet: 75-100 % of the
// interval, or 75-90 % when the multiplier is 1.
func (m *Machine) jittered(d time.Duration) time.Duration {
	if m.timing.DetectMult == 1 {
		return time.Duration(float64(d) * (0.9 - 0.15*m.jitter()))
	}
	return time.Duration(float64(d) * (1 - 0.25*m.jitter()))
}

// reschedule brings the next periodic packet forward when the interval shrank.
func (m *Machine) reschedule(now time.Time) {
	if iv := m.txInterval(); iv > 0 {
		if at := now.Add(m.jittered(iv)); at.Before(m.nextTx) {
			m.nextTx = at
		}
	}
}

// Receive processes one packet that Unmarshal accepted and that was
// delivered to this session (RFC 5880 section 6.8.6). It reports the
// state change it caused, if any.
func (m *Machine) Receive(now time.Time, p Packet) (Transition, bool) {
	if m.state == AdminDown {
		return Transition{}, false
	}
	if p.YourDiscr != 0 && p.YourDiscr != m.myDiscr {
		return Transition{}, false
	}
	m.remoteDiscr = p.MyDiscr
	m.remoteMinRx = p.RequiredMinRx
	m.remoteTx = p.DesiredMinTx
	m.remoteMult = p.DetectMult
	if p.Final {
		m.polling = false
	}
	if p.Poll {
		m.owesFinal = true
	}
	m.detectAt = now.Add(m.DetectionTime())
	from := m.state
	switch {
	case p.State == AdminDown:
		if m.state != Down {
			m.goDown(DiagNeighborDown)
		}
	case m.state == Down && p.State == Down:
		m.state = Init
	case m.state == Down && p.State == Init, m.state == Init && (p.State == Init || p.State == Up):
		m.goUp()
	case m.state == Up && p.State == Down:
		m.goDown(DiagNeighborDown)
	}
	m.reschedule(now)
	if m.state == from {
		return Transition{}, false
	}
	m.sendNow = true
	return Transition{From: from, To: m.state, Diag: m.diag}, true
}

// goUp enters Up: from now on send at the configured pace, and poll the
// peer so that it learns the new interval (RFC 5880 section 6.8.3).
func (m *Machine) goUp() {
	m.state, m.diag = Up, DiagNone
	if m.timing.DesiredMinTx != m.desiredTx {
		m.desiredTx = m.timing.DesiredMinTx
		m.polling = true
	}
}

// goDown enters Down with diag and falls back to the slow pace.
func (m *Machine) goDown(diag Diag) {
	m.state, m.diag = Down, diag
	m.desiredTx = max(m.timing.DesiredMinTx, SlowTx)
	m.polling = false
}

// Advance runs the detection timer: if no packet arrived within the
// detection time, an Init or Up session goes Down and forgets the peer's
// discriminator (RFC 5880 section 6.8.4).
func (m *Machine) Advance(now time.Time) (Transition, bool) {
	if m.detectAt.IsZero() || now.Before(m.detectAt) {
		return Transition{}, false
	}
	m.detectAt = time.Time{}
	m.remoteDiscr = 0
	m.remoteMinRx = time.Microsecond
	if m.state != Init && m.state != Up {
		return Transition{}, false
	}
	from := m.state
	m.goDown(DiagDetectionTimeExpired)
	m.sendNow = true
	return Transition{From: from, To: Down, Diag: m.diag}, true
}

// Due returns the packet to send at now, if one is due: a periodic one, an
// answer to a poll, or news of a state change.
func (m *Machine) Due(now time.Time) (Packet, bool) {
	iv := m.txInterval()
	periodic := iv > 0 && !now.Before(m.nextTx)
	if !periodic && !m.owesFinal && !m.sendNow {
		return Packet{}, false
	}
	p := m.packet()
	m.sendNow = false
	if m.owesFinal {
		p.Final, p.Poll, m.owesFinal = true, false, false
	}
	if iv > 0 {
		m.nextTx = now.Add(m.jittered(iv))
	}
	return p, true
}

// Next returns when the machine next needs Advance and Due to be called,
// and false when it waits for nothing but packets. Call Due after every
// Receive and Advance first: news of a state change is due at once.
func (m *Machine) Next() (time.Time, bool) {
	next := m.detectAt
	if m.txInterval() > 0 && (next.IsZero() || m.nextTx.Before(next)) {
		next = m.nextTx
	}
	return next, !next.IsZero()
}

// Shutdown puts the session in AdminDown (diag 7) and returns the packet
// that tells the peer, so that it does not take our leaving as a failure.
func (m *Machine) Shutdown() (Transition, Packet) {
	from := m.state
	m.state, m.diag = AdminDown, DiagAdminDown
	m.polling, m.owesFinal, m.sendNow = false, false, false
	m.detectAt = time.Time{}
	return Transition{From: from, To: AdminDown, Diag: m.diag}, m.packet()
}

// packet is the control packet describing the session now.
func (m *Machine) packet() Packet {
	return Packet{
		Diag: m.diag, State: m.state, Poll: m.polling, DetectMult: m.timing.DetectMult,
		MyDiscr: m.myDiscr, YourDiscr: m.remoteDiscr,
		DesiredMinTx: m.desiredTx, RequiredMinRx: m.timing.RequiredMinRx,
	}
}
