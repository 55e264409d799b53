package pipeline

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

type recordingPublisher struct{ got []model.Config }

func (r *recordingPublisher) Publish(_ context.Context, cfg model.Config) Report {
	r.got = append(r.got, cfg)
	return Report{}
}

func names(cfg model.Config) []string {
	var out []string
	for _, s := range cfg.Services {
		out = append(out, s.Name)
	}
	return out
}

type readiness struct {
	ready  bool
	reason string
}

func (r *readiness) SetReady(ready bool, reason string) { r.ready, r.reason = ready, reason }

// TestMergerReplacesOnlyItsSourcesPart: nothing is published (and the
// server is not ready) until every source has delivered its first part;
// then a Kubernetes update keeps the DSL services, a DSL update keeps the
// Kubernetes ones, and the order of the union does not depend on who
// published last.
func TestMergerReplacesOnlyItsSourcesPart(t *testing.T) {
	rec := &recordingPublisher{}
	ready := &readiness{}
	m := NewMerger(rec, ready, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, "kubernetes", "dsl")
	if ready.ready || ready.reason != "waiting for dsl, kubernetes" {
		t.Fatalf("readiness before any source: %+v", ready)
	}
	ctx := context.Background()
	m.For("dsl").Publish(ctx, model.Config{Services: []model.Service{{Name: "shop"}}})
	if len(rec.got) != 0 || ready.ready || !slices.Equal(m.Waiting(), []string{"kubernetes"}) {
		t.Fatalf("published %d configs, ready %+v, waiting %v before the API server was read", len(rec.got), ready, m.Waiting())
	}
	m.For("kubernetes").Publish(ctx, model.Config{Services: []model.Service{{Name: "team.web"}}})
	if !ready.ready {
		t.Fatalf("not ready once every source was read: %+v", ready)
	}
	m.For("kubernetes").Publish(ctx, model.Config{Services: []model.Service{{Name: "team.api"}}})
	m.For("dsl").Publish(ctx, model.Config{Services: []model.Service{{Name: "shop"}, {Name: "cart"}}})

	want := [][]string{{"shop", "team.web"}, {"shop", "team.api"}, {"shop", "cart", "team.api"}}
	if len(rec.got) != len(want) {
		t.Fatalf("published %d times, want %d", len(rec.got), len(want))
	}
	for i, w := range want {
		if got := names(rec.got[i]); !slices.Equal(got, w) {
			t.Errorf("publish %d = %v, want %v", i, got, w)
		}
	}
}
