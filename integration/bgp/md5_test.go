//go:build !lab

package bgp_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/bgp"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMD5 runs two directors against one BIRD that wants a password from
// both: the one with the right password comes up, the one with a wrong
// password stays down, although it had as long as the first one to try.
func TestMD5(t *testing.T) {
	l := needLab(t)
	const secret = "tlb-md5-Secret"
	nbrs := neighbors(l, 2)
	for i := range nbrs {
		nbrs[i].Password = secret
	}
	r := startRouter(t, l, nbrs)

	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	if err := os.WriteFile(good, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("wrong-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c0, c1 := speakerConfig(l, 0), speakerConfig(l, 1)
	c0.Peers[0].PasswordFile = good
	c1.Peers[0].PasswordFile = bad
	// Speaker 0 logs everything, GoBGP's debug output included, into buf:
	// the password must not appear in it.
	var buf lockedBuffer
	s0, err := bgp.NewSpeaker(c0, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug - 8})), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := s0.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s0.Stop(context.Background()) })
	s1 := startSpeaker(t, c1)

	waitEstablished(t, r, director(0), 20*time.Second)
	// Give the wrong-password session several connect retries more.
	time.Sleep(5 * time.Second)
	st, err := r.ProtocolState(t.Context(), director(1))
	if err != nil {
		t.Fatal(err)
	}
	if st == "Established" {
		t.Fatalf("session with the wrong password is %s", st)
	}
	if s1.Established() {
		t.Fatal("speaker with the wrong password reports Established")
	}
	t.Logf("right password: Established; wrong password: %s", st)
	_ = s0.Stop(context.Background())
	logs := buf.String()
	if !strings.Contains(logs, "bgp peer added") || len(logs) < 1000 {
		t.Fatalf("speaker logged only %d bytes; the leak check below would prove nothing", len(logs))
	}
	if strings.Contains(logs, secret) {
		t.Errorf("the MD5 password appears in the speaker's logs")
	}
	t.Logf("%d bytes of speaker logs (debug level) checked: no password", len(logs))
}

// lockedBuffer is a bytes.Buffer safe for concurrent log writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
