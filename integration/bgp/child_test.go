//go:build !lab

package bgp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp"
)

// envSpeaker, set in a child process, holds the childSpec of a speaker
// that this test binary runs as its own process, so a test can stop and
// restart a director's BGP speaker the way a real restart does.
const envSpeaker = "TLB_BGP_TEST_SPEAKER"

// childSpec is what a child speaker runs: its config and the prefixes
// it announces.
type childSpec struct {
	Config   bgp.Config
	Prefixes []string
}

// runSpeakerChild runs the speaker of spec until SIGTERM, then stops it
// as the director does (bgp.Speaker.Stop) and exits. It prints
// "announced" once the prefixes are announced.
func runSpeakerChild(spec string) int {
	var cs childSpec
	if err := json.Unmarshal([]byte(spec), &cs); err != nil {
		fmt.Fprintln(os.Stderr, "child speaker spec:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	s, err := bgp.NewSpeaker(cs.Config, log, nil)
	if err == nil {
		err = s.Start(ctx)
	}
	if err == nil {
		var ps []netip.Prefix
		for _, p := range cs.Prefixes {
			ps = append(ps, netip.MustParsePrefix(p))
		}
		err = s.Announce(ctx, ps)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child speaker:", err)
		return 1
	}
	fmt.Println("announced")
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(sctx); err != nil {
		fmt.Fprintln(os.Stderr, "child speaker stop:", err)
		return 1
	}
	return 0
}

// speakerProcess is a child speaker.
type speakerProcess struct {
	cmd  *exec.Cmd
	done chan error
}

// startSpeakerProcess runs a speaker of cfg announcing prefixes in a
// child process and returns once it has announced them. The test's end
// kills it if it still runs.
func startSpeakerProcess(t *testing.T, cfg bgp.Config, prefixes ...string) *speakerProcess {
	t.Helper()
	spec, err := json.Marshal(childSpec{Config: cfg, Prefixes: prefixes})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envSpeaker+"="+string(spec))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child speaker: %v", err)
	}
	p := &speakerProcess{cmd: cmd, done: make(chan error, 1)}
	announced := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if sc.Text() == "announced" && !ok {
				ok = true
				announced <- true
			}
		}
		if !ok {
			announced <- false
		}
		_, _ = io.Copy(io.Discard, out)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		p.done <- nil
		if t.Failed() {
			t.Logf("child speaker log:\n%s", stderr.String())
		}
	})
	select {
	case ok := <-announced:
		if !ok {
			t.Fatalf("child speaker exited before announcing: %s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("child speaker did not announce within 30s: %s", stderr.String())
	}
	return p
}

// terminate sends SIGTERM and waits for the child to exit cleanly.
func (p *speakerProcess) terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal child speaker: %v", err)
	}
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("child speaker exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("child speaker did not exit within 15s of SIGTERM")
	}
}

// kill sends SIGKILL, as a crash, and waits for the child to be gone.
func (p *speakerProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill child speaker: %v", err)
	}
	p.done <- <-p.done // wait, and keep the result for the cleanup
}
