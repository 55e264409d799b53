package dsl_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tlbproject/tlb/internal/dirwatch"
	"github.com/tlbproject/tlb/l7/dsl"
)

// TestWatchReloadsEverythingOnOverflow: a queue overflow means events were
// lost, so the directory is reloaded and watching goes on; only another
// kind of error ends the watch.
func TestWatchReloadsEverythingOnOverflow(t *testing.T) {
	n := dirwatch.NewFake()
	d := dsl.NewDir(t.TempDir(), time.Now)
	changed := make(chan struct{}, 10)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		done <- d.WatchWith(ctx, n, time.Millisecond, time.Hour, func() { changed <- struct{}{} })
	}()
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case err := <-done:
			t.Fatalf("%s: watch ended: %v", what, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no reload", what)
		}
	}
	wait("start")
	n.ErrC <- fmt.Errorf("read: %w", fsnotify.ErrEventOverflow)
	wait("overflow")
	n.ErrC <- fsnotify.ErrEventOverflow
	wait("second overflow")
	n.EventC <- fsnotify.Event{Name: "x.yaml", Op: fsnotify.Write}
	wait("event after overflow")
	boom := errors.New("boom")
	n.ErrC <- boom
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Fatalf("watch ended with %v; want %v", err, boom)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an unknown watcher error did not end the watch")
	}
}
