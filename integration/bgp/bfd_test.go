//go:build !lab

package bgp_test

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/bgp/bfd"
	"github.com/tlbproject/tlb/bgp/birdlab"
)

// bfdHoldTime is the BGP hold time in the BFD tests: long, so that a
// withdrawal well before it can only be BFD's doing.
const bfdHoldTime = 9

// startBFDPair starts BIRD with `bfd on` for director0 and a speaker with
// BFD on (defaults: 100 ms x 5), and waits until BGP is Established, the
// VIP route is in BIRD and BFD is Up on both sides.
func startBFDPair(t *testing.T) (*birdlab.Lab, *birdlab.Router, *bgp.Speaker) {
	t.Helper()
	l := needLab(t)
	nbrs := neighbors(l, 1)
	nbrs[0].BFD = true
	r := birdlab.StartForTest(t, l.Router, birdlab.RouterConfig{
		RouterID: l.RouterAddr, ASN: routerASN, HoldTime: bfdHoldTime, Keepalive: 3, Neighbors: nbrs,
		BFD: &birdlab.BFD{MinRxMilliseconds: 100, MinTxMilliseconds: 100, Multiplier: 5},
	})
	cfg := speakerConfig(l, 0)
	cfg.Peers[0].HoldTimeSeconds, cfg.Peers[0].KeepaliveSeconds = bfdHoldTime, 3
	cfg.Peers[0].BFD = bgp.BFDConfig{Enabled: true}
	s := startSpeaker(t, cfg)
	waitEstablished(t, r, director(0), 20*time.Second)
	ctx := context.Background()
	if err := s.Announce(ctx, prefixes(vipSubnet)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.WaitRoutes(ctx, vipSubnet, 5*time.Second, hasNextHops(l.DirectorAddrs[0])); err != nil {
		t.Fatal(err)
	}
	waitBFDUp(t, r, s, l.DirectorAddrs[0])
	return l, r, s
}

// waitBFDUp waits until both BIRD and the speaker see the session Up.
func waitBFDUp(t *testing.T, r *birdlab.Router, s *bgp.Speaker, director string) {
	t.Helper()
	var bird []birdlab.BFDSession
	var ours []bgp.BFDStatus
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		if bird, err = r.BFDSessions(context.Background()); err != nil {
			t.Fatal(err)
		}
		ours = s.BFD()
		if len(bird) == 1 && bird[0].Address == director && bird[0].State == "Up" && len(ours) == 1 && ours[0].State == bfd.Up {
			return
		}
	}
	t.Fatalf("bfd not up on both sides: bird %+v, director %+v", bird, ours)
}

// TestBFDWithdrawsOnLinkCut: BFD comes Up with BIRD; when the director's
// link is cut (every packet dropped, the interface left up), BIRD's BFD
// drops the BGP session and the director's route is gone well before the
// hold time; the director shuts its side too; once the link heals, BFD,
// BGP and the route come back.
func TestBFDWithdrawsOnLinkCut(t *testing.T) {
	l, r, s := startBFDPair(t)
	ctx := context.Background()
	heal, err := l.CutDirectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	healed := false
	t.Cleanup(func() {
		if !healed {
			_ = heal()
		}
	})
	_, took, err := r.WaitRoutes(ctx, vipSubnet, bfdHoldTime*time.Second, none)
	if err != nil {
		t.Fatalf("after the cut: %v", err)
	}
	t.Logf("route gone from bird %v after the link cut (hold time %ds)", took, bfdHoldTime)
	if took >= bfdHoldTime*time.Second/3 {
		t.Errorf("route gone after %v: not well before the hold time of %ds, so not BFD's doing", took, bfdHoldTime)
	}
	if msg, err := r.LastError(ctx, director(0)); err != nil || !strings.Contains(msg, "BFD") {
		t.Errorf("bird's last error for %s: %q (%v), want the BFD session down", director(0), msg, err)
	}
	waitSpeaker(t, "the director to shut its bgp peer", func() bool {
		b := s.BFD()
		return len(b) == 1 && b[0].State != bfd.Up && !s.Established()
	})

	if err := heal(); err != nil {
		t.Fatal(err)
	}
	healed = true
	waitBFDUp(t, r, s, l.DirectorAddrs[0])
	waitEstablished(t, r, director(0), 20*time.Second)
	if _, _, err := r.WaitRoutes(ctx, vipSubnet, 5*time.Second, hasNextHops(l.DirectorAddrs[0])); err != nil {
		t.Fatalf("after the link healed: %v", err)
	}
}

func waitSpeaker(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestBFDStaysUpUnderLoad: with every core kept busy by spinning
// processes (twice as many as cores), the director's BFD session changes
// state not once, BIRD's stays Up (had it gone down it would have told the
// director, and dropped the BGP session) and BGP stays Established on both
// sides over the loaded period: BFD detects lost links, not a busy machine.
// (BIRD's "since" column is not compared: it converts its monotonic clock
// to wall time afresh on every call and moves by milliseconds.)
func TestBFDStaysUpUnderLoad(t *testing.T) {
	_, r, s := startBFDPair(t)
	ctx := context.Background()
	before := s.BFD()[0].Transitions
	stopLoad := burnCPUs(t, 2*runtime.NumCPU())
	defer stopLoad()
	const period = 10 * time.Second
	for end := time.Now().Add(period); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ours := s.BFD()
		bird, err := r.BFDSessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		bgpState, err := r.ProtocolState(ctx, director(0))
		if err != nil {
			t.Fatal(err)
		}
		if ours[0].Transitions != before || len(bird) != 1 || bird[0].State != "Up" || !s.Established() || bgpState != "Established" {
			t.Fatalf("under load: director bfd %+v (%d changes before), bird bfd %+v, bgp established %v (bird: %s)",
				ours, before, bird, s.Established(), bgpState)
		}
	}
	t.Logf("bfd stayed up on both sides for %v with %d spinning processes", period, 2*runtime.NumCPU())
}

// burnCPUs starts n busy-looping processes and returns what stops them.
func burnCPUs(t *testing.T, n int) func() {
	t.Helper()
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		cmds = nil
	}
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			stop()
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	return stop
}
