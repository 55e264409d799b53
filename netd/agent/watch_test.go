package agent

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

type fakeNotifier struct {
	events chan fsnotify.Event
	errs   chan error
}

func (f *fakeNotifier) Events() <-chan fsnotify.Event { return f.events }
func (f *fakeNotifier) Errors() <-chan error          { return f.errs }
func (f *fakeNotifier) Close() error                  { return nil }

// TestWatchFileSignalsAtOnceAndOnOverflow: the first signal comes as soon
// as the watch exists (a change made before it is read again), and a queue
// overflow signals a change rather than ending the watch.
func TestWatchFileSignalsAtOnceAndOnOverflow(t *testing.T) {
	n := &fakeNotifier{events: make(chan fsnotify.Event), errs: make(chan error)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := WatchFile(ctx, n, time.Millisecond, "/etc/tlb/netd.yaml", slog.New(slog.DiscardHandler))
	expect := func(step string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no change signalled", step)
		}
	}
	expect("right after the watch is registered")
	n.errs <- fmt.Errorf("read: %w", fsnotify.ErrEventOverflow)
	expect("after an overflow")
	n.events <- fsnotify.Event{Name: "/etc/tlb/netd.yaml", Op: fsnotify.Write}
	expect("after an event, still watching")
}
