package console

import (
	"slices"
	"strings"
	"testing"
)

// TestBFDStateShownWithTheBGPPeer: the console reads the director's BFD
// state per peer from tlb_bfd_session_state, shows it beside the BGP
// session (page and text) and lists a BFD session that is not up as a
// problem; a peer without BFD shows none.
func TestBFDStateShownWithTheBGPPeer(t *testing.T) {
	const exposition = `# TYPE tlb_bgp_session_established gauge
tlb_bgp_session_established{peer="198.18.1.1"} 1
tlb_bgp_session_established{peer="198.18.1.254"} 0
tlb_bgp_session_established{peer="198.18.2.1"} 1
# TYPE tlb_bfd_session_state gauge
tlb_bfd_session_state{peer="198.18.1.1",state="admindown"} 0
tlb_bfd_session_state{peer="198.18.1.1",state="down"} 0
tlb_bfd_session_state{peer="198.18.1.1",state="init"} 0
tlb_bfd_session_state{peer="198.18.1.1",state="up"} 1
tlb_bfd_session_state{peer="198.18.1.254",state="down"} 1
tlb_bfd_session_state{peer="198.18.1.254",state="up"} 0
`
	c := Component{Role: RoleDirector, Name: "dir-1", Ready: true}
	if err := applyMetrics(&c, strings.NewReader(exposition)); err != nil {
		t.Fatal(err)
	}
	want := []BGPSession{
		{Peer: "198.18.1.1", Established: true, BFD: "up"},
		{Peer: "198.18.1.254", Established: false, BFD: "down"},
		{Peer: "198.18.2.1", Established: true},
	}
	if !slices.Equal(c.Sessions, want) {
		t.Fatalf("sessions %+v, want %+v", c.Sessions, want)
	}
	out := getText(t, fakeAPI{st: testState()}, fakeComponents([]Component{c}))
	for _, line := range []string{
		"    BGP peer 198.18.1.1: established, BFD up\n",
		"    BGP peer 198.18.1.254: down, BFD down\n",
		"    BGP peer 198.18.2.1: established\n",
		"BFD session down",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("text lacks %q:\n%s", line, out)
		}
	}
	code, page := get(t, fakeAPI{st: testState()}, fakeComponents([]Component{c}), "/")
	if code != 200 || !strings.Contains(page, `<td>198.18.1.254</td><td><span class="down">down</span></td><td><span class="down">down</span></td>`) ||
		!strings.Contains(page, `<td>198.18.2.1</td><td><span class="up">established</span></td><td>-</td>`) {
		t.Errorf("page (%d) does not show BFD beside the BGP sessions:\n%s", code, page)
	}
	v := BuildView(Snapshot{Components: []Component{c}})
	var bfd []string
	for _, p := range v.Problems {
		if strings.HasPrefix(p.What, "BFD") {
			bfd = append(bfd, p.Object+": "+p.What)
		}
	}
	if !slices.Equal(bfd, []string{"peer 198.18.1.254: BFD session down"}) {
		t.Errorf("BFD problems %v, want only 198.18.1.254's", bfd)
	}
}
