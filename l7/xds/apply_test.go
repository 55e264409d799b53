package xds

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// validSet translates the example config for kind and validates it, as
// l7/xdsbuild does.
func validSet(t *testing.T, r model.Resolved, kind translate.Kind) Set {
	t.Helper()
	set := translate.Group(r, "edge", kind)
	sums, err := validate.NewMemo().Set(set)
	if err != nil {
		t.Fatal(err)
	}
	return Set{Resources: set, Sums: sums}
}

// TestInvalidKeyKeepsItsSnapshot: a key the update says is invalid keeps
// the very snapshot it had and is not removed, while a valid change of
// another key goes out.
func TestInvalidKeyKeepsItsSnapshot(t *testing.T) {
	cfg, errs, _ := dsl.NewDir("../testdata/config", time.Now).Load()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := model.Resolve(cfg, model.Options{})
	s := New(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), nil, time.Now, Options{Group: "edge", Kinds: []translate.Kind{translate.Gateway, translate.GRPC}})
	gw, grpc := Key(translate.Gateway, "edge"), Key(translate.GRPC, "edge")
	res := s.Apply(context.Background(), Update{Start: time.Now(), Sets: map[string]Set{
		gw: validSet(t, r, translate.Gateway), grpc: validSet(t, r, translate.GRPC)}})
	if len(res.Invalid) > 0 || len(res.Changed) != 2 {
		t.Fatalf("first apply: %+v", res)
	}
	before, err := s.cache.GetSnapshot(gw)
	if err != nil {
		t.Fatal(err)
	}
	versions := s.Versions()

	empty := translate.Resources{resource.ListenerType: nil, resource.RouteType: nil, resource.ClusterType: nil, resource.EndpointType: nil}
	res = s.Apply(context.Background(), Update{Start: time.Now(),
		Sets:    map[string]Set{grpc: {Resources: empty, Sums: map[resource.Type][]validate.Sum{}}},
		Invalid: map[string]error{gw: errors.New("dangling reference")}})
	if res.Invalid[gw] == nil {
		t.Errorf("the invalid key is not reported: %+v", res)
	}
	if after, _ := s.cache.GetSnapshot(gw); after != before {
		t.Error("the snapshot of the invalid key was replaced")
	}
	if !maps.Equal(s.Versions()[gw], versions[gw]) || len(res.Removed) > 0 {
		t.Errorf("the invalid key changed or went: versions %v -> %v, removed %v", versions[gw], s.Versions()[gw], res.Removed)
	}
	if len(res.Changed) != 1 || res.Changed[0] != grpc {
		t.Errorf("changed %v; the valid change must go out", res.Changed)
	}
}
