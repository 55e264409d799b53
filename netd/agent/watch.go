package agent

import (
	"context"
	"log/slog"
	"time"

	"github.com/tlbproject/tlb/internal/dirwatch"
)

// WatchFile turns n's events for the file's directory into change signals
// for Run, one per burst (debounce), until ctx ends; it closes n then. The
// first signal is sent at once: the watch was registered before WatchFile
// was called, so reading the file again on it catches any change made
// between the first Load and the watch. Errors (a queue overflow above
// all) mean events were lost: they signal a change too, never stop.
func WatchFile(ctx context.Context, n dirwatch.Notifier, debounce time.Duration, path string, log *slog.Logger) <-chan struct{} {
	out := make(chan struct{}, 1)
	out <- struct{}{}
	loop := dirwatch.Loop{Path: path, Debounce: debounce, Log: log, Changed: func() {
		select {
		case out <- struct{}{}:
		default:
		}
	}}
	go func() {
		if err := loop.Run(ctx, n); err != nil {
			log.Error("config watch stopped; changes are picked up at each resync only", "path", path, "err", err)
		}
	}()
	return out
}
