package config

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"time"

	"github.com/tlbproject/tlb/internal/dirwatch"
	"github.com/tlbproject/tlb/internal/filecap"
)

// Watcher re-reads the configuration file when its directory changes (so
// editors that write a new file and rename it, and Kubernetes ConfigMap
// volumes that swap a symlink, are both seen) and re-applies the last
// valid version on every resync tick, which repairs drift.
type Watcher struct {
	// Path is the configuration file.
	Path string
	// Log receives one line per rejected file and per change seen.
	Log *slog.Logger
	// Debounce is how long to wait after the last change before reading
	// the file, so a file being written is read once, whole. Zero
	// means 200ms.
	Debounce time.Duration
	// OnReject, if set, is called with each rejected file's error (for
	// a metric). The last valid configuration stays in force.
	OnReject func(error)
	// Notify, if set, replaces the inotify watch of the file's directory
	// (tests inject errors through it). The watch must be registered
	// when it returns.
	Notify func(dir string) (Notifier, error)
}

// Notifier is the part of a file-system watcher Run needs.
type Notifier = dirwatch.Notifier

func watchDir(dir string) (Notifier, error) {
	d, err := dirwatch.Watch(dir)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Run calls apply with initial, then with every new valid version of the
// file and, on every tick of resync, with the last valid version again. An
// invalid file is logged and ignored. Run returns when ctx is done, or an
// error if the directory cannot be watched.
func (w *Watcher) Run(ctx context.Context, initial *Config, resync <-chan time.Time, apply func(context.Context, *Config)) error {
	log := w.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	debounce := w.Debounce
	if debounce == 0 {
		debounce = 200 * time.Millisecond
	}
	notify := w.Notify
	if notify == nil {
		notify = watchDir
	}
	dir := filepath.Dir(w.Path)
	fw, err := notify(dir)
	if err != nil {
		return fmt.Errorf("watch config directory %s: %w", dir, err)
	}
	r := &reload{w: w, log: log, good: initial, lastData: initial.raw, apply: func(c *Config) { apply(ctx, c) }}
	apply(ctx, initial)
	loop := dirwatch.Loop{Path: w.Path, Debounce: debounce, Log: log, Changed: r.read, Resync: resync,
		OnResync: func() { apply(ctx, r.good) }}
	return loop.Run(ctx, fw)
}

// reload reads the file again on each change and applies each new valid
// version; an invalid one is logged and the last valid one stays.
type reload struct {
	w        *Watcher
	log      *slog.Logger
	good     *Config
	lastData []byte
	apply    func(*Config)
}

func (r *reload) read() {
	data, err := filecap.Read(r.w.Path, MaxFileSize)
	if err == nil && bytes.Equal(data, r.lastData) {
		return
	}
	if err == nil {
		r.lastData = data
	}
	cfg, perr := parseRead(r.w.Path, data, err)
	if perr != nil {
		r.log.Error("config rejected, keeping the last valid one", "path", r.w.Path, "err", perr)
		if r.w.OnReject != nil {
			r.w.OnReject(perr)
		}
		return
	}
	good := r.good
	cfg.Override(good.overrides)
	if cfg.Director.MetricsAddress != good.Director.MetricsAddress || cfg.Director.RuntimeDir != good.Director.RuntimeDir ||
		cfg.Director.ResyncInterval != good.Director.ResyncInterval || cfg.Director.DrainPeriod != good.Director.DrainPeriod ||
		!reflect.DeepEqual(cfg.BGP, good.BGP) || !reflect.DeepEqual(cfg.Health, good.Health) {
		r.log.Warn("director, bgp or health settings changed in config; they take effect at the next restart", "path", r.w.Path)
	}
	r.log.Info("config changed, applying", "path", r.w.Path, "services", len(cfg.Desired.Services))
	r.good = cfg
	r.apply(cfg)
}

func parseRead(path string, data []byte, readErr error) (*Config, error) {
	if readErr != nil {
		return nil, fmt.Errorf("read config: %w", readErr)
	}
	return Parse(path, data)
}
