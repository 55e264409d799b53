package dsl_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tlbproject/tlb/l7/dsl"
)

// fakeNotifier delivers the events and errors the test sends.
type fakeNotifier struct {
	events chan fsnotify.Event
	errs   chan error
}

func (f *fakeNotifier) Events() <-chan fsnotify.Event { return f.events }
func (f *fakeNotifier) Errors() <-chan error          { return f.errs }
func (f *fakeNotifier) Close() error                  { return nil }

// TestWatchReloadsEverythingOnOverflow: a queue overflow means events were
// lost, so the directory is reloaded and watching goes on; only another
// kind of error ends the watch.
func TestWatchReloadsEverythingOnOverflow(t *testing.T) {
	n := &fakeNotifier{events: make(chan fsnotify.Event), errs: make(chan error)}
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
	n.errs <- fmt.Errorf("read: %w", fsnotify.ErrEventOverflow)
	wait("overflow")
	n.errs <- fsnotify.ErrEventOverflow
	wait("second overflow")
	n.events <- fsnotify.Event{Name: "x.yaml", Op: fsnotify.Write}
	wait("event after overflow")
	boom := errors.New("boom")
	n.errs <- boom
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Fatalf("watch ended with %v; want %v", err, boom)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an unknown watcher error did not end the watch")
	}
}
