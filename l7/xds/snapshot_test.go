package xds

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// TestSnapshotBuiltFromTheLastMatchesAFreshOne: through random series of
// changes (a resource rebuilt with the same or other content, removed,
// restored), the snapshot built from the one served before holds exactly
// what a snapshot built from nothing holds, versions included; the one
// served before is left as it was (the cache may still be answering from
// it); and a type nothing changed in keeps the very maps it had.
func TestSnapshotBuiltFromTheLastMatchesAFreshOne(t *testing.T) {
	cfg, errs, _ := dsl.NewDir("../testdata/config", time.Now).Load()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	orig := translate.Group(model.Resolve(cfg, model.Options{}), "edge", translate.Gateway)
	gen := Generation()
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 2))
		set := translate.Resources{}
		for typ, items := range orig {
			set[typ] = slices.Clone(items)
		}
		var prev *snapshot
		for step := range 25 {
			typ := slices.Sorted(maps.Keys(set))[r.IntN(len(set))]
			before := set[typ]
			switch n := len(set[typ]); {
			case n == 0 || r.IntN(4) == 0:
				set[typ] = slices.Clone(orig[typ])
			case r.IntN(3) == 0:
				i := r.IntN(n)
				set[typ] = slices.Delete(slices.Clone(set[typ]), i, i+1)
			default:
				i := r.IntN(n)
				items := slices.Clone(set[typ])
				c := proto.Clone(items[i]).(types.Resource)
				if cl, ok := c.(*cluster.Cluster); ok && r.IntN(2) == 0 {
					cl.ConnectTimeout = durationpb.New(time.Duration(step+1) * time.Second)
				}
				items[i] = c
				set[typ] = items
			}
			sums, err := validate.NewMemo().Set(set)
			if err != nil && !slices.Equal(before, set[typ]) {
				set[typ] = before // keep sets that a server would publish
				continue
			}
			var kept map[resource.Type]snapshotCopy
			if prev != nil {
				kept = copyOf(prev)
			}
			got, gotVersions, err := nextSnapshot(gen, prev, set, sums)
			if err != nil {
				t.Fatal(err)
			}
			want, wantVersions, _ := nextSnapshot(gen, nil, set, sums)
			if !maps.Equal(gotVersions, wantVersions) {
				t.Fatalf("seed %d step %d: versions %v, from nothing %v", seed, step, gotVersions, wantVersions)
			}
			for typ := range set {
				if !maps.Equal(got.GetResources(typ), want.GetResources(typ)) || !maps.Equal(got.GetVersionMap(typ), want.GetVersionMap(typ)) {
					t.Fatalf("seed %d step %d: %s differs from a snapshot built from nothing", seed, step, typ)
				}
				if !maps.Equal(got.GetResourcesAndTTL(typ), want.GetResourcesAndTTL(typ)) {
					t.Fatalf("seed %d step %d: %s with TTLs differs", seed, step, typ)
				}
			}
			if prev != nil {
				for typ, c := range kept {
					if !maps.Equal(prev.GetResources(typ), c.resources) || !maps.Equal(prev.GetVersionMap(typ), c.versions) {
						t.Fatalf("seed %d step %d: building the next snapshot changed the served one's %s", seed, step, typ)
					}
				}
				for typ := range set {
					same := slices.Equal(prev.types[typ].items, set[typ])
					shared := reflect.ValueOf(prev.GetResources(typ)).UnsafePointer() == reflect.ValueOf(got.GetResources(typ)).UnsafePointer()
					if same != shared {
						t.Fatalf("seed %d step %d: %s unchanged %v, maps shared %v", seed, step, typ, same, shared)
					}
				}
			}
			prev = got
		}
	}
}

type snapshotCopy struct {
	resources map[string]types.Resource
	versions  map[string]string
}

func copyOf(s *snapshot) map[resource.Type]snapshotCopy {
	out := map[resource.Type]snapshotCopy{}
	for typ := range s.types {
		out[typ] = snapshotCopy{maps.Clone(s.GetResources(typ)), maps.Clone(s.GetVersionMap(typ))}
	}
	return out
}
