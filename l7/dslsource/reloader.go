// Package dslsource is the source stage of the DSL directory: on start and
// on every change of the directory it loads the group's files and
// publishes the configuration they make (to the Merger's door for "dsl"),
// and logs what was rejected and why (file and field). It owns that loop
// only; parsing is l7/dsl's, what happens after the publish is the
// pipeline's (l7/pipeline).
package dslsource

import (
	"context"
	"log/slog"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/pipeline"
)

// Reloader loads the DSL directory into the pipeline.
type Reloader struct {
	Dir    *dsl.Dir
	Server pipeline.Publisher
	Log    *slog.Logger
}

// Reload loads the directory once and publishes it. File errors and
// config problems are logged (never with key material) and returned in
// the report; what is good is served regardless.
func (r *Reloader) Reload(ctx context.Context) Result {
	cfg, fileErrs, err := r.Dir.Load()
	if err != nil {
		// Nothing was read: publishing would drop every file's objects.
		r.Log.Error("config directory unreadable; nothing published from it until it is", "dir", r.Dir.Path(), "err", err)
		return Result{Unreadable: err}
	}
	for _, err := range fileErrs {
		r.Log.Warn("config file rejected and left out until it is fixed", "dir", r.Dir.Path(), "err", err)
	}
	rep := r.Server.Publish(ctx, cfg)
	for _, p := range rep.Problems {
		if p.Rejected {
			r.Log.Warn("config object rejected", "kind", p.Kind, "name", p.Name, "origin", string(p.Origin), "field", p.Field, "err", p.Msg)
		} else {
			r.Log.Info("config object kept despite a conflict", "kind", p.Kind, "name", p.Name, "origin", string(p.Origin), "field", p.Field, "err", p.Msg)
		}
	}
	for key, err := range rep.Invalid {
		r.Log.Error("resource set failed validation and was not sent; the last good one stays", "key", key, "err", err)
	}
	if len(rep.Changed) > 0 || len(rep.Removed) > 0 {
		r.Log.Info("config published", "changed", rep.Changed, "removed", rep.Removed)
	}
	return Result{FileErrors: fileErrs, Report: rep}
}

// Result is what one reload found and did.
type Result struct {
	// Unreadable is set when the directory could not be read at all.
	Unreadable error
	FileErrors []error
	pipeline.Report
}

// Run reloads once the directory is watched, then after every change of
// it, until ctx ends. The first load comes after the watch is registered,
// so a file written in between is never missed.
func (r *Reloader) Run(ctx context.Context, debounce, resync time.Duration) error {
	return r.Dir.Watch(ctx, debounce, resync, func() { r.Reload(ctx) })
}
