package birdlab

import (
	"slices"
	"testing"
)

func TestParseBFDSessions(t *testing.T) {
	const out = `BIRD 2.0.12 ready.
bfd1:
IP address                Interface  State      Since         Interval  Timeout
198.18.0.2                r0         Up         04:42:59.225    0.100    0.500
198.18.0.3                r0         Down       04:42:58.001    1.000    0.000
`
	want := []BFDSession{{"198.18.0.2", "Up", "04:42:59.225"}, {"198.18.0.3", "Down", "04:42:58.001"}}
	if got := ParseBFDSessions(out); !slices.Equal(got, want) {
		t.Errorf("ParseBFDSessions = %+v, want %+v", got, want)
	}
	if got := ParseBFDSessions("BIRD 2.0.12 ready.\nbfd1:\nIP address Interface State Since Interval Timeout\n"); len(got) != 0 {
		t.Errorf("no sessions: %+v", got)
	}
}
