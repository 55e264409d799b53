package birdlab

import (
	"maps"
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

func TestParseSessionRestarting(t *testing.T) {
	const out = `director0  BGP        ---        start  04:36:07.584  Active        Socket: Connection closed
  BGP state:          Active
    Neighbor graceful restart active
    Restart timer:    29.983/-
  Channel ipv4
    Routes:         2 imported, 0 exported, 2 preferred
`
	if got := ParseSession(out); got != (Session{State: "Active", Imported: 2, Restarting: true}) {
		t.Errorf("ParseSession = %+v", got)
	}
}

func TestParseAttributes(t *testing.T) {
	const out = "BIRD 2.0.12 ready.\nTable master4:\n" +
		"203.0.113.0/25       unicast [director0 04:36:07.553] * (100) [AS64512i]\n" +
		"\tvia 198.18.0.2 on r0\n\tType: BGP univ\n\tBGP.local_pref: 200\n" +
		"\tBGP.community: (64512,100) (64512,200)\n\tBGP.large_community: (64512, 1, 2)\n" +
		"                     unicast [director1 04:36:07.553] (100) [AS64512i]\n\tBGP.local_pref: 100\n"
	got := ParseAttributes(out)
	want := map[string]string{"Type": "BGP univ", "BGP.local_pref": "200",
		"BGP.community": "(64512,100) (64512,200)", "BGP.large_community": "(64512, 1, 2)"}
	if !maps.Equal(got, want) {
		t.Errorf("ParseAttributes = %v, want %v", got, want)
	}
}
