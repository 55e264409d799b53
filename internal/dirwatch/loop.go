package dirwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Notifier is a registered watch of one directory: a Dir, or a test's
// Fake. The config watchers take one so that tests can inject errors (a
// queue overflow above all).
type Notifier interface {
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error
}

// Loop is the one debounced watch loop of the config watchers of tlb,
// netd and l7: it turns a directory's events into calls of Changed, one
// per burst. Set Changed; the other fields are optional.
type Loop struct {
	// Path names what is watched, in logs and errors.
	Path string
	// Debounce is how long to wait after the last event of a burst
	// before Changed runs, so a file being written is read once, whole.
	Debounce time.Duration
	// Changed is called once at the start, once per burst of events and
	// once after each watcher error (events may have been lost).
	Changed func()
	// Resync, if set, ticks a safety net for missed events; on each tick
	// OnResync runs, or Changed when OnResync is nil.
	Resync   <-chan time.Time
	OnResync func()
	// StopOnError ends Run with any watcher error other than a queue
	// overflow; without it every error is logged and Changed runs.
	StopOnError bool
	// Log receives each event (Debug) and each error (Warn); nil
	// discards them.
	Log *slog.Logger
}

// Run calls Changed at once (the watch was registered before Run, so a
// change made before it is read then), then as Loop says, on Run's
// goroutine, until ctx ends; it closes n when it returns. It returns nil
// when ctx ends, and an error when n's channels close or, with
// StopOnError, on a watcher error other than an overflow.
func (l Loop) Run(ctx context.Context, n Notifier) error {
	defer func() { _ = n.Close() }()
	log := l.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	onResync := l.OnResync
	if onResync == nil {
		onResync = l.Changed
	}
	l.Changed()
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-n.Events():
			if !ok {
				return fmt.Errorf("watch %s: event channel closed", l.Path)
			}
			log.Debug("watched directory changed", "path", l.Path, "event", ev.String())
			fire = time.After(l.Debounce)
		case err, ok := <-n.Errors():
			if !ok {
				return fmt.Errorf("watch %s: error channel closed", l.Path)
			}
			if l.StopOnError && !errors.Is(err, fsnotify.ErrEventOverflow) {
				return fmt.Errorf("watch %s: %w", l.Path, err)
			}
			// An overflow lost events, and any other error may have:
			// read again rather than trust that nothing changed.
			log.Warn("watching for changes; reading again", "path", l.Path, "err", err)
			fire = time.After(l.Debounce)
		case <-fire:
			fire = nil
			l.Changed()
		case <-l.Resync:
			onResync()
		}
	}
}
