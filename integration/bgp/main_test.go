//go:build !lab

// Package bgp_test proves the bgp package against a real BIRD 2 router:
// routes appear with the director as next hop, are withdrawn, foreign
// prefixes never arrive, MD5 works, and two directors give ECMP.
//
// The tests run on the host (root, netns and veth are enough): TestMain
// builds a two-namespace lab and re-runs the test binary inside the
// directors' namespace, so in-process speakers dial BIRD from there.
package bgp_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/tlbproject/tlb/bgp/birdlab"
)

// lab is set in the child process that runs inside the directors' namespace.
var lab *birdlab.Lab

func TestMain(m *testing.M) {
	if spec := os.Getenv(envSpeaker); spec != "" {
		os.Exit(runSpeakerChild(spec))
	}
	if l := birdlab.FromEnv(); l != nil {
		lab = l
		os.Exit(m.Run())
	}
	if reason := cannotRun(); reason != "" {
		// Run anyway so each test reports the skip reason itself.
		os.Exit(m.Run())
	}
	l, err := birdlab.Setup(context.Background(), fmt.Sprintf("tlbbgp%d", os.Getpid()), 3)
	if err != nil {
		fmt.Fprintln(os.Stderr, "set up bird lab:", err)
		os.Exit(1)
	}
	code, err := l.Enter()
	l.Teardown()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// cannotRun says why this machine cannot run the BIRD tests, or "".
func cannotRun() string {
	if os.Geteuid() != 0 {
		return "needs root to create network namespaces"
	}
	for _, bin := range []string{"bird", "birdc", "ip", "nft"} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " not installed (apt-get install bird2 iproute2 nftables)"
		}
	}
	return ""
}

// needLab fails with the reason when the lab could not be built: make
// test installs BIRD and runs as root, so a missing lab is a failure, never
// a skip that would pass unnoticed.
func needLab(t *testing.T) *birdlab.Lab {
	t.Helper()
	if lab == nil {
		t.Fatal("BIRD lab unavailable: " + cannotRun())
	}
	return lab
}
