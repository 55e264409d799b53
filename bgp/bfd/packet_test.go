package bfd

import (
	"errors"
	"testing"
	"time"
)

func TestPacketRoundTrip(t *testing.T) {
	p := Packet{
		Diag: DiagNeighborDown, State: Init, Poll: true, DetectMult: 5,
		MyDiscr: 0xdeadbeef, YourDiscr: 7,
		DesiredMinTx: 100 * time.Millisecond, RequiredMinRx: 300 * time.Millisecond,
	}
	b := p.Marshal()
	if len(b) != PacketLen || b[0] != 0x23 || b[1] != 0xa0 || b[3] != 24 {
		t.Fatalf("header bytes % x", b[:4])
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if got != p {
		t.Errorf("round trip = %+v, want %+v", got, p)
	}
}

func TestUnmarshalRejects(t *testing.T) {
	good := Packet{State: Up, DetectMult: 3, MyDiscr: 1, YourDiscr: 2, DesiredMinTx: time.Second, RequiredMinRx: time.Second}.Marshal()
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for name, tc := range map[string]struct {
		b    []byte
		want error
	}{
		"short":             {good[:23], ErrShort},
		"length field long": {edit(func(b []byte) []byte { b[3] = 30; return b }), ErrShort},
		"length field 20":   {edit(func(b []byte) []byte { b[3] = 20; return b }), ErrShort},
		"version 0":         {edit(func(b []byte) []byte { b[0] &= 0x1f; return b }), ErrVersion},
		"auth bit":          {edit(func(b []byte) []byte { b[1] |= 0x04; return b }), ErrAuth},
		"multipoint bit":    {edit(func(b []byte) []byte { b[1] |= 0x01; return b }), ErrMultipoint},
		"detect mult 0":     {edit(func(b []byte) []byte { b[2] = 0; return b }), ErrDetectMult},
		"my discr 0":        {edit(func(b []byte) []byte { copy(b[4:8], []byte{0, 0, 0, 0}); return b }), ErrMyDiscr},
		"your discr 0 up":   {edit(func(b []byte) []byte { copy(b[8:12], []byte{0, 0, 0, 0}); return b }), ErrNoYourDiscr},
		"poll and final":    {edit(func(b []byte) []byte { b[1] |= 0x30; return b }), ErrPollAndFinal},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Unmarshal(tc.b); !errors.Is(err, tc.want) {
				t.Errorf("Unmarshal = %v, want %v", err, tc.want)
			}
		})
	}
	// Your discriminator 0 is fine while Down: that is how sessions start.
	down := Packet{State: Down, DetectMult: 3, MyDiscr: 1}.Marshal()
	if _, err := Unmarshal(down); err != nil {
		t.Errorf("first packet in Down: %v", err)
	}
}

// FuzzUnmarshal: any bytes either fail to decode or decode to a packet
// that encodes back to the same 24 header bytes.
func FuzzUnmarshal(f *testing.F) {
	f.Add(Packet{State: Down, DetectMult: 3, MyDiscr: 1, DesiredMinTx: time.Second}.Marshal())
	f.Add(Packet{State: Up, Final: true, DetectMult: 5, MyDiscr: 9, YourDiscr: 4}.Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Unmarshal(b)
		if err != nil {
			return
		}
		again := p.Marshal()
		want := append([]byte(nil), b[:PacketLen]...)
		want[3] = PacketLen // a longer length field is allowed and not kept
		want[1] &^= 0x0a    // nor are the C and D bits: no demand mode here
		if string(again) != string(want) {
			t.Errorf("re-encoded % x, read % x", again, want)
		}
	})
}
