// Package dirwatch watches one directory for changes (inotify through
// fsnotify) and runs the one debounced loop (Loop) the config watchers of
// tlb, netd and l7 share: each gives it what a change means to it, and
// tests drive it through a Fake in place of the inotify watch. It watches a
// directory rather than a file, so editors that write a new file and
// rename it, and Kubernetes volumes that swap a symlink, are both seen.
package dirwatch

import "github.com/fsnotify/fsnotify"

// Dir is a registered watch of one directory.
type Dir struct{ w *fsnotify.Watcher }

// Watch watches dir; the watch is registered when it returns, so a change
// made after Watch returns is never missed.
func Watch(dir string) (*Dir, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return nil, err
	}
	return &Dir{w}, nil
}

// Events are the changes in the directory.
func (d *Dir) Events() <-chan fsnotify.Event { return d.w.Events }

// Errors are the watch's errors; fsnotify.ErrEventOverflow means events
// were lost.
func (d *Dir) Errors() <-chan error { return d.w.Errors }

// Close ends the watch.
func (d *Dir) Close() error { return d.w.Close() }
