package birdlab

import (
	"slices"
	"testing"
)

func TestParseRoutes(t *testing.T) {
	const out = `BIRD 2.0.12 ready.
Access restricted
Table master4:
203.0.113.0/24       unicast [director1 20:06:32.709] * (100) [AS64512i]
	via 198.18.2.2 on r0
                     unicast [director0 20:06:31.101] (100) [AS64512i]
	via 198.18.0.2 on r0
`
	got := ParseRoutes(out)
	want := []Route{{Protocol: "director0", NextHop: "198.18.0.2"}, {Protocol: "director1", NextHop: "198.18.2.2"}}
	if !slices.Equal(got, want) {
		t.Errorf("ParseRoutes = %v, want %v", got, want)
	}
	if got := ParseRoutes("BIRD 2.0.12 ready.\nNetwork not found\n"); len(got) != 0 {
		t.Errorf("not found: %v", got)
	}
}

func TestParseSession(t *testing.T) {
	const out = `BIRD 2.0.12 ready.
Name       Proto      Table      State  Since         Info
director1  BGP        ---        up     20:06:32.709  Established   
  BGP state:          Established
    Neighbor address: 198.18.1.2
    Neighbor AS:      64512
  Channel ipv4
    State:          UP
    Table:          master4
    Routes:         0 imported, 0 exported, 0 preferred
`
	if got := ParseSession(out); got != (Session{State: "Established", Imported: 0}) {
		t.Errorf("ParseSession = %+v", got)
	}
	if got := ParseSession("  BGP state:          Active\n    Routes:         3 imported, 0 exported, 3 preferred\n"); got != (Session{State: "Active", Imported: 3}) {
		t.Errorf("ParseSession = %+v", got)
	}
}
