package dsl

import (
	"context"
	"fmt"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch calls changed after files in the directory change, once per burst
// of events (debounce), until ctx ends. It also rescans every resync as a
// safety net for missed events (mounted ConfigMaps swap symlinks).
func (d *Dir) Watch(ctx context.Context, debounce, resync time.Duration, changed func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch config directory %s: %w", d.path, err)
	}
	defer func() { _ = w.Close() }()
	if err := w.Add(d.path); err != nil {
		return fmt.Errorf("watch config directory %s: %w", d.path, err)
	}
	var fire <-chan time.Time
	tick := time.NewTicker(resync)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.Events:
			if !ok {
				return nil
			}
			fire = time.After(debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			return fmt.Errorf("watch config directory %s: %w", d.path, err)
		case <-fire:
			fire = nil
			changed()
		case <-tick.C:
			changed()
		}
	}
}
