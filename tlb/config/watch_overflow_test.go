package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tlbproject/tlb/internal/dirwatch"
)

// TestWatcherRereadsOnOverflow: a change whose event was lost in a queue
// overflow is still applied, and the watcher keeps running.
func TestWatcherRereadsOnOverflow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tlb.yaml")
	if err := os.WriteFile(path, []byte(oneService), 0o644); err != nil {
		t.Fatal(err)
	}
	initial, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	n := dirwatch.NewFake()
	w := &Watcher{Path: path, Debounce: 10 * time.Millisecond, Notify: func(string) (Notifier, error) { return n, nil }}
	applied := make(chan int, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- w.Run(ctx, initial, nil, func(_ context.Context, c *Config) { applied <- len(c.Desired.Services) })
	}()
	defer func() { cancel(); <-done }()
	expect := func(step string, want int) {
		t.Helper()
		select {
		case got := <-applied:
			if got != want {
				t.Fatalf("%s: %d services applied; want %d", step, got, want)
			}
		case err := <-done:
			t.Fatalf("%s: watcher ended: %v", step, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: nothing applied", step)
		}
	}
	expect("start", 1)
	time.Sleep(50 * time.Millisecond) // let the one look after the watch pass
	if err := os.WriteFile(path, []byte(twoService), 0o644); err != nil {
		t.Fatal(err)
	}
	n.ErrC <- fmt.Errorf("read: %w", fsnotify.ErrEventOverflow)
	expect("after the overflow", 2)
}
