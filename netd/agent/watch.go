package agent

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tlbproject/tlb/internal/dirwatch"
)

// Notifier is the part of a file-system watcher WatchFile needs: events and
// errors for a directory already watched. Tests inject errors through it.
type Notifier interface {
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error
}

// DirNotifier watches dir with inotify; the watch is registered when it
// returns.
func DirNotifier(dir string) (Notifier, error) {
	d, err := dirwatch.Watch(dir)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// WatchFile turns n's events for the file's directory into change signals
// for Run, one per burst (debounce), until ctx ends; it closes n then. The
// first signal is sent at once: the watch was registered before WatchFile
// was called, so reading the file again on it catches any change made
// between the first Load and the watch. Errors (a queue overflow above
// all) mean events were lost: they signal a change too, never stop.
func WatchFile(ctx context.Context, n Notifier, debounce time.Duration, path string, log *slog.Logger) <-chan struct{} {
	out := make(chan struct{}, 1)
	out <- struct{}{}
	go func() {
		defer func() { _ = n.Close() }()
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-n.Events():
				if !ok {
					return
				}
				log.Debug("config directory event", "event", ev.String())
				fire = time.After(debounce)
			case err, ok := <-n.Errors():
				if !ok {
					return
				}
				if !errors.Is(err, fsnotify.ErrEventOverflow) {
					log.Error("file watcher error; reading the config again", "path", path, "err", err)
				}
				fire = time.After(debounce)
			case <-fire:
				fire = nil
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}
