package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatcherRefusesOversizedAndFIFO: the watcher reads the file under
// the same cap as Load. A file over MaxFileSize and a FIFO put in the
// file's place are each rejected without being read whole or blocking,
// the last valid config stays, and a valid file afterwards applies.
func TestWatcherRefusesOversizedAndFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tlb.yaml")
	if err := os.WriteFile(path, []byte(oneService), 0o644); err != nil {
		t.Fatal(err)
	}
	initial, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	applied := make(chan int, 10)
	rejected := make(chan error, 10)
	w := &Watcher{Path: path, Debounce: 20 * time.Millisecond, OnReject: func(err error) { rejected <- err }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- w.Run(ctx, initial, make(chan time.Time), func(_ context.Context, c *Config) { applied <- len(c.Desired.Services) })
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("Run did not return after cancel")
		}
	}()
	waitApplied := func(want int) {
		t.Helper()
		select {
		case n := <-applied:
			if n != want {
				t.Fatalf("applied %d services; want %d", n, want)
			}
		case <-time.After(time.Minute):
			t.Fatal("nothing applied")
		}
	}
	waitRejected := func(what, want string) {
		t.Helper()
		select {
		case err := <-rejected:
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s rejected with %q; want it to say %q", what, err, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s not rejected", what)
		}
	}
	waitApplied(1)

	big := filepath.Join(dir, ".big")
	if err := os.WriteFile(big, []byte(oneService+strings.Repeat("#", MaxFileSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(big, path); err != nil {
		t.Fatal(err)
	}
	waitRejected("a file over the cap", "size cap")

	fifo := filepath.Join(dir, ".fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fifo, path); err != nil {
		t.Fatal(err)
	}
	waitRejected("a FIFO", "not a regular file")

	fixed := filepath.Join(dir, ".fixed")
	if err := os.WriteFile(fixed, []byte(twoService), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fixed, path); err != nil {
		t.Fatal(err)
	}
	waitApplied(2)
}
