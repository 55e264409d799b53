package serve

import (
	"context"
	"slices"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/xds"
)

type recordingPublisher struct{ got []model.Config }

func (r *recordingPublisher) Publish(_ context.Context, cfg model.Config) xds.Report {
	r.got = append(r.got, cfg)
	return xds.Report{}
}

func names(cfg model.Config) []string {
	var out []string
	for _, s := range cfg.Services {
		out = append(out, s.Name)
	}
	return out
}

// TestMergerReplacesOnlyItsSourcesPart: a Kubernetes update keeps the DSL
// services, a DSL update keeps the Kubernetes ones, and the order of the
// union does not depend on who published last.
func TestMergerReplacesOnlyItsSourcesPart(t *testing.T) {
	rec := &recordingPublisher{}
	m := NewMerger(rec)
	ctx := context.Background()
	m.For("dsl").Publish(ctx, model.Config{Services: []model.Service{{Name: "shop"}}})
	m.For("kubernetes").Publish(ctx, model.Config{Services: []model.Service{{Name: "team.web"}}})
	m.For("kubernetes").Publish(ctx, model.Config{Services: []model.Service{{Name: "team.api"}}})
	m.For("dsl").Publish(ctx, model.Config{Services: []model.Service{{Name: "shop"}, {Name: "cart"}}})

	want := [][]string{{"shop"}, {"shop", "team.web"}, {"shop", "team.api"}, {"shop", "cart", "team.api"}}
	if len(rec.got) != len(want) {
		t.Fatalf("published %d times, want %d", len(rec.got), len(want))
	}
	for i, w := range want {
		if got := names(rec.got[i]); !slices.Equal(got, w) {
			t.Errorf("publish %d = %v, want %v", i, got, w)
		}
	}
}
