package dirwatch

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// TestLoopDebouncesAndGoesOnAfterErrors: Changed runs at once, once per
// burst of events, after an overflow and after any other error (without
// StopOnError), and OnResync on each Resync tick.
func TestLoopDebouncesAndGoesOnAfterErrors(t *testing.T) {
	n := NewFake()
	changed, resynced := make(chan struct{}, 10), make(chan struct{}, 10)
	resync := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	l := Loop{Path: "/etc/x", Debounce: 100 * time.Millisecond, Resync: resync,
		Changed: func() { changed <- struct{}{} }, OnResync: func() { resynced <- struct{}{} }}
	go func() { done <- l.Run(ctx, n) }()
	expect := func(c chan struct{}, step string) {
		t.Helper()
		select {
		case <-c:
		case err := <-done:
			t.Fatalf("%s: loop ended: %v", step, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: nothing", step)
		}
	}
	expect(changed, "start")
	for range 3 {
		n.EventC <- fsnotify.Event{Name: "/etc/x/a", Op: fsnotify.Write}
	}
	expect(changed, "burst")
	n.ErrC <- fmt.Errorf("read: %w", fsnotify.ErrEventOverflow)
	expect(changed, "overflow")
	n.ErrC <- errors.New("boom")
	expect(changed, "other error")
	resync <- time.Now()
	expect(resynced, "resync")
	if len(changed) != 0 {
		t.Fatalf("a burst of 3 events gave %d extra calls", len(changed))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("loop ended with %v when ctx ended", err)
	}
}

// TestLoopStopOnError: with StopOnError an overflow still reads again,
// any other error ends Run with it.
func TestLoopStopOnError(t *testing.T) {
	n := NewFake()
	changed := make(chan struct{}, 10)
	done := make(chan error, 1)
	l := Loop{Path: "/etc/x", Debounce: time.Millisecond, StopOnError: true, Changed: func() { changed <- struct{}{} }}
	go func() { done <- l.Run(context.Background(), n) }()
	<-changed
	n.ErrC <- fsnotify.ErrEventOverflow
	<-changed
	boom := errors.New("boom")
	n.ErrC <- boom
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Fatalf("Run ended with %v; want %v", err, boom)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an error other than an overflow did not end Run")
	}
}
