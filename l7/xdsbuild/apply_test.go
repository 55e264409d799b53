package xdsbuild

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
)

// TestInvalidSetIsNeverSent hands apply a resource set that fails
// validation (a listener refers to a route configuration that is not in
// the set): the key keeps its snapshot, the other keys are served.
func TestInvalidSetIsNeverSent(t *testing.T) {
	cfg, errs, _ := dsl.NewDir("../testdata/config", time.Now).Load()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	s := xds.New(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), nil, time.Now, xds.Options{Group: "edge", Kinds: []translate.Kind{translate.Gateway, translate.GRPC}})
	b := New(s)
	if rep := pipeline.New(model.NewResolver(), model.Options{}, time.Now, b).Publish(context.Background(), cfg); len(rep.Invalid) > 0 || len(rep.Changed) != 2 {
		t.Fatalf("first publish: %+v", rep)
	}
	key := xds.Key(translate.Gateway, "edge")
	versions := s.Versions()

	r := model.Resolve(cfg, model.Options{})
	sets := map[string]translate.Resources{}
	for _, kind := range []translate.Kind{translate.Gateway, translate.GRPC} {
		sets[xds.Key(kind, "edge")] = translate.Group(r, "edge", kind)
	}
	bad := translate.Resources{}
	for typ, items := range sets[key] {
		bad[typ] = items
	}
	delete(bad, resource.RouteType)
	sets[key] = bad
	// Also change the gRPC clients' set, which is valid and must go out.
	sets[xds.Key(translate.GRPC, "edge")] = translate.Resources{
		resource.ListenerType: nil, resource.RouteType: nil, resource.ClusterType: nil, resource.EndpointType: nil,
	}

	rep := b.apply(context.Background(), time.Now(), &r, sets)

	if err := rep.Invalid[key]; err == nil || !strings.Contains(err.Error(), "dangling reference") {
		t.Fatalf("invalid set not reported: %v", rep.Invalid)
	}
	if !maps.Equal(s.Versions()[key], versions[key]) {
		t.Fatalf("versions of %s changed: %v -> %v", key, versions[key], s.Versions()[key])
	}
	for _, k := range rep.Removed {
		if k == key {
			t.Fatal("an invalid key was removed instead of kept")
		}
	}
	if len(rep.Changed) != 1 || rep.Changed[0] != xds.Key(translate.GRPC, "edge") {
		t.Fatalf("changed = %v; the valid change must go out", rep.Changed)
	}
}
