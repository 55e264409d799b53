package agent

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tlbproject/tlb/internal/dirwatch"
)

// TestWatchFileSignalsAtOnceAndOnOverflow: the first signal comes as soon
// as the watch exists (a change made before it is read again), and a queue
// overflow signals a change rather than ending the watch.
func TestWatchFileSignalsAtOnceAndOnOverflow(t *testing.T) {
	n := dirwatch.NewFake()
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
	n.ErrC <- fmt.Errorf("read: %w", fsnotify.ErrEventOverflow)
	expect("after an overflow")
	n.EventC <- fsnotify.Event{Name: "/etc/tlb/netd.yaml", Op: fsnotify.Write}
	expect("after an event, still watching")
}
