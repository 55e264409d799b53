package dsl

import (
	"context"
	"fmt"
	"time"

	"github.com/tlbproject/tlb/internal/dirwatch"
)

// Notifier is the part of a file-system watcher Watch needs: events and
// errors for a directory that is already being watched (FSNotifier's
// dirwatch.Dir); tests inject errors (a queue overflow) through their own.
type Notifier = dirwatch.Notifier

// FSNotifier watches dir with inotify (or the platform's equivalent). The
// watch is registered when it returns.
func FSNotifier(dir string) (Notifier, error) {
	d, err := dirwatch.Watch(dir)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Watch calls changed once as soon as the directory is watched (so a change
// made before the watch existed is never lost: callers do their first load
// here, not before), then after files in the directory change, once per
// burst of events (debounce), until ctx ends. It also rescans every resync
// as a safety net for missed events (mounted ConfigMaps swap symlinks). A
// queue overflow means events were lost: it reloads everything and goes on.
func (d *Dir) Watch(ctx context.Context, debounce, resync time.Duration, changed func()) error {
	n, err := FSNotifier(d.path)
	if err != nil {
		return fmt.Errorf("watch config directory %s: %w", d.path, err)
	}
	return d.WatchWith(ctx, n, debounce, resync, changed)
}

// WatchWith is Watch with the notifier given; it closes n when it returns.
// Any watcher error other than an overflow ends it.
func (d *Dir) WatchWith(ctx context.Context, n Notifier, debounce, resync time.Duration, changed func()) error {
	tick := time.NewTicker(resync)
	defer tick.Stop()
	loop := dirwatch.Loop{Path: "config directory " + d.path, Debounce: debounce, Changed: changed, Resync: tick.C, StopOnError: true}
	return loop.Run(ctx, n)
}
