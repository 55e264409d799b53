package bfd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// State is a BFD session state (RFC 5880 section 4.1).
type State uint8

// The four session states, with their wire values.
const (
	AdminDown State = 0
	Down      State = 1
	Init      State = 2
	Up        State = 3
)

// States lists every state, in wire order, for metrics that export one
// series per state.
var States = [...]State{AdminDown, Down, Init, Up}

// String returns the state's lower-case name, as metrics and logs show it.
func (s State) String() string {
	switch s {
	case AdminDown:
		return "admindown"
	case Down:
		return "down"
	case Init:
		return "init"
	case Up:
		return "up"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Diag says why a session last left Up (RFC 5880 section 4.1).
type Diag uint8

// The diagnostics this package sets.
const (
	DiagNone                 Diag = 0
	DiagDetectionTimeExpired Diag = 1
	DiagNeighborDown         Diag = 3
	DiagAdminDown            Diag = 7
)

// String names the diagnostic for logs.
func (d Diag) String() string {
	switch d {
	case DiagNone:
		return "none"
	case DiagDetectionTimeExpired:
		return "control detection time expired"
	case DiagNeighborDown:
		return "neighbor signaled session down"
	case DiagAdminDown:
		return "administratively down"
	}
	return fmt.Sprintf("diag(%d)", uint8(d))
}

// PacketLen is the length of a control packet without authentication.
const PacketLen = 24

// Packet is one BFD control packet. Intervals travel in microseconds on
// the wire and are time.Durations here.
type Packet struct {
	// Diag is the sender's diagnostic.
	Diag Diag
	// State is the sender's session state.
	State State
	// Poll and Final are the P and F bits of a poll sequence.
	Poll, Final bool
	// DetectMult is the sender's detection time multiplier.
	DetectMult uint8
	// MyDiscr and YourDiscr are the sender's and the receiver's discriminators.
	MyDiscr, YourDiscr uint32
	// DesiredMinTx is the fastest the sender wants to send.
	DesiredMinTx time.Duration
	// RequiredMinRx is the fastest the sender accepts packets; 0 means "send none".
	RequiredMinRx time.Duration
	// RequiredMinEchoRx is always 0 from us: we do not echo.
	RequiredMinEchoRx time.Duration
}

// Marshal encodes p as a 24-byte control packet, version 1.
func (p Packet) Marshal() []byte {
	b := make([]byte, PacketLen)
	b[0] = 1<<5 | byte(p.Diag)&0x1f
	b[1] = byte(p.State) << 6
	if p.Poll {
		b[1] |= 0x20
	}
	if p.Final {
		b[1] |= 0x10
	}
	b[2] = p.DetectMult
	b[3] = PacketLen
	binary.BigEndian.PutUint32(b[4:], p.MyDiscr)
	binary.BigEndian.PutUint32(b[8:], p.YourDiscr)
	binary.BigEndian.PutUint32(b[12:], micros(p.DesiredMinTx))
	binary.BigEndian.PutUint32(b[16:], micros(p.RequiredMinRx))
	binary.BigEndian.PutUint32(b[20:], micros(p.RequiredMinEchoRx))
	return b
}

func micros(d time.Duration) uint32 { return uint32(d / time.Microsecond) }

// Errors Unmarshal returns; a packet that fails them is discarded.
var (
	ErrShort        = errors.New("bfd packet shorter than its length field or 24 bytes")
	ErrVersion      = errors.New("bfd packet version is not 1")
	ErrAuth         = errors.New("bfd packet asks for authentication, which is not configured")
	ErrMultipoint   = errors.New("bfd packet has the multipoint bit set")
	ErrDetectMult   = errors.New("bfd packet has detect multiplier 0")
	ErrMyDiscr      = errors.New("bfd packet has my discriminator 0")
	ErrNoYourDiscr  = errors.New("bfd packet has your discriminator 0 in state init or up")
	ErrPollAndFinal = errors.New("bfd packet has both poll and final set")
)

// Unmarshal decodes and checks a control packet by the reception rules of
// RFC 5880 section 6.8.6 that need no session.
func Unmarshal(b []byte) (Packet, error) {
	if len(b) < PacketLen || int(b[3]) < PacketLen || int(b[3]) > len(b) {
		return Packet{}, ErrShort
	}
	if b[0]>>5 != 1 {
		return Packet{}, ErrVersion
	}
	flags := b[1]
	p := Packet{
		Diag:              Diag(b[0] & 0x1f),
		State:             State(flags >> 6),
		Poll:              flags&0x20 != 0,
		Final:             flags&0x10 != 0,
		DetectMult:        b[2],
		MyDiscr:           binary.BigEndian.Uint32(b[4:]),
		YourDiscr:         binary.BigEndian.Uint32(b[8:]),
		DesiredMinTx:      time.Duration(binary.BigEndian.Uint32(b[12:])) * time.Microsecond,
		RequiredMinRx:     time.Duration(binary.BigEndian.Uint32(b[16:])) * time.Microsecond,
		RequiredMinEchoRx: time.Duration(binary.BigEndian.Uint32(b[20:])) * time.Microsecond,
	}
	switch {
	case flags&0x04 != 0:
		return Packet{}, ErrAuth
	case flags&0x01 != 0:
		return Packet{}, ErrMultipoint
	case p.DetectMult == 0:
		return Packet{}, ErrDetectMult
	case p.MyDiscr == 0:
		return Packet{}, ErrMyDiscr
	case p.YourDiscr == 0 && (p.State == Init || p.State == Up):
		return Packet{}, ErrNoYourDiscr
	case p.Poll && p.Final:
		return Packet{}, ErrPollAndFinal
	}
	return p, nil
}
