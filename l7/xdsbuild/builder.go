// Package xdsbuild is the pipeline consumer that makes each resolved
// change into the Envoy resources of every kind of client of the group:
// translate (l7/translate), then validate (l7/validate), then hand the
// valid sets to the xDS server (l7/xds), which versions and serves them.
// Contour's xdscache SnapshotHandler plays this part there.
//
// It owns the translation cache and the validation memos; it neither
// resolves (the pipeline did) nor serves (xds does).
package xdsbuild

import (
	"context"
	"fmt"
	"time"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
	"github.com/tlbproject/tlb/l7/xds"
)

// Builder translates and validates each change for an xDS server. Changes
// pass one at a time (the pipeline serialises them).
type Builder struct {
	server *xds.Server
	// translations redo only what the services that changed need; memos
	// check each key's resource sets, each resource once per content.
	translations *translate.Cache
	memos        map[string]*validate.Memo
}

// New returns the Builder of server's group and kinds.
func New(server *xds.Server) *Builder {
	return &Builder{server: server, translations: translate.NewCache(), memos: map[string]*validate.Memo{}}
}

// Consume implements pipeline.Consumer: translate the change for each kind
// of client, validate, and apply; rep gets the keys that failed
// validation, changed or went.
func (b *Builder) Consume(ctx context.Context, c pipeline.Change, rep *pipeline.Report) {
	g := b.server.Group()
	shared := b.translations.Shared(*c.Resolved, g)
	sets := map[string]translate.Resources{}
	for _, kind := range b.server.Kinds() {
		sets[xds.Key(kind, g)] = b.translations.ForKind(*c.Resolved, g, kind, shared)
	}
	res := b.apply(ctx, c.Start, c.Resolved, sets)
	b.translations.Sweep()
	rep.Invalid, rep.Changed, rep.Removed = res.Invalid, res.Changed, res.Removed
}

// apply validates every key's set and hands the server the valid ones; a
// set that fails validation is never sent.
func (b *Builder) apply(ctx context.Context, start time.Time, r *model.Resolved, sets map[string]translate.Resources) xds.Result {
	u := xds.Update{Start: start, Problems: len(r.Problems), Sets: map[string]xds.Set{}, Invalid: map[string]error{}}
	for key, set := range sets {
		sums, err := b.memo(key).Set(set)
		if err != nil {
			u.Invalid[key] = fmt.Errorf("validate resources of %s: %w", key, err)
			continue
		}
		u.Sets[key] = xds.Set{Resources: set, Sums: sums}
	}
	for key := range b.memos {
		if _, ok := sets[key]; !ok {
			delete(b.memos, key) // a key no longer built: its memo goes with it
		}
	}
	return b.server.Apply(ctx, u)
}

// memo returns key's validation memo, made on first use.
func (b *Builder) memo(key string) *validate.Memo {
	m := b.memos[key]
	if m == nil {
		m = validate.NewMemo()
		b.memos[key] = m
	}
	return m
}
