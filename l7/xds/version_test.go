package xds

import (
	"testing"
	"time"

	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// TestVersionMapMatchesGoControlPlane: the precomputed delta versions are
// exactly what go-control-plane would compute itself: it sends its own
// hash as each resource's version, and a client that reconnects presents
// those; a version of ours that differs resends the resource.
func TestVersionMapMatchesGoControlPlane(t *testing.T) {
	cfg, errs, _ := dsl.NewDir("../testdata/config", time.Now).Load()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	set := translate.Group(model.Resolve(cfg, model.Options{}), "edge", translate.Gateway)
	sums, err := validate.NewMemo().Set(set)
	if err != nil {
		t.Fatal(err)
	}
	ours, _, err := nextSnapshot(Generation(), nil, set, sums)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := cachev3.NewSnapshot("v", set)
	if err != nil {
		t.Fatal(err)
	}
	if err := theirs.ConstructVersionMap(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for typ := range set {
		if len(ours.GetVersionMap(typ)) != len(theirs.VersionMap[typ]) {
			t.Errorf("%s: %d versions, go-control-plane has %d", typ, len(ours.GetVersionMap(typ)), len(theirs.VersionMap[typ]))
		}
		for name, v := range theirs.VersionMap[typ] {
			n++
			if ours.GetVersionMap(typ)[name] != v {
				t.Errorf("%s %s: version %q, go-control-plane computes %q", typ, name, ours.GetVersionMap(typ)[name], v)
			}
		}
	}
	if n < 10 {
		t.Fatalf("compared only %d versions", n)
	}
}
