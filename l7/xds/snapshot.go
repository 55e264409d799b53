package xds

import (
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/validate"
)

// snapshot is one consistent resource set of a snapshot key as
// go-control-plane's cache serves it. Each type's resources and delta
// versions are maps built once and never changed afterwards, because the
// cache reads them for every watch it answers while the next snapshot is
// being built: a later snapshot copies the maps of a type that changed
// and shares those of the types that did not (see nextTypeSet), so a
// change of 100 endpoints among 10,000 touches 100 entries, not 40,000.
type snapshot struct {
	types map[resource.Type]*typeSet
}

var _ cachev3.ResourceSnapshot = (*snapshot)(nil)

// typeSet is the resources of one type in a snapshot.
type typeSet struct {
	// version is the type's version (typeVersion) for state-of-the-world
	// clients.
	version string
	// items are the resources in set order (by name), as translated;
	// nobody changes the slice or its resources once published.
	items     []types.Resource
	resources map[string]types.Resource
	// versions are the delta versions: the hex SHA-256 of each
	// resource's deterministic encoding, which is also what
	// go-control-plane would compute itself.
	versions map[string]string

	ttlOnce sync.Once
	ttl     map[string]types.ResourceWithTTL
}

// nextTypeSet returns the typeSet of items (with their sums, in the same
// order), built from prev, the type's set in the snapshot served before
// (nil: none). It returns prev itself when items are the same messages;
// otherwise new maps: copies of prev's with the changed, new and removed
// names updated.
func nextTypeSet(generation string, prev *typeSet, items []types.Resource, sums []validate.Sum) *typeSet {
	if prev != nil && slices.Equal(prev.items, items) {
		return prev
	}
	t := &typeSet{version: typeVersion(generation, items, sums), items: items}
	if prev == nil {
		t.resources = make(map[string]types.Resource, len(items))
		t.versions = make(map[string]string, len(items))
	} else {
		t.resources, t.versions = maps.Clone(prev.resources), maps.Clone(prev.versions)
	}
	for i, r := range items {
		if prev != nil && i < len(prev.items) && prev.items[i] == r {
			continue // the same message at the same place: same name, same version
		}
		name := cachev3.GetResourceName(r)
		if t.resources[name] == r {
			continue
		}
		t.resources[name] = r
		if v := hex.EncodeToString(sums[i][:]); t.versions[name] != v {
			t.versions[name] = v
		}
	}
	if len(t.resources) != len(items) {
		// Names of prev are gone (or items name one twice, which
		// validation refuses before a set gets here).
		keep := make(map[string]bool, len(items))
		for _, r := range items {
			keep[cachev3.GetResourceName(r)] = true
		}
		for name := range t.resources {
			if !keep[name] {
				delete(t.resources, name)
				delete(t.versions, name)
			}
		}
	}
	return t
}

// nextSnapshot builds the snapshot of set (with its sums) from prev, the
// key's snapshot served before (nil: none), and returns it with its
// versions per type.
func nextSnapshot(generation string, prev *snapshot, set map[resource.Type][]types.Resource, sums map[resource.Type][]validate.Sum) (*snapshot, map[string]string, error) {
	snap := &snapshot{types: make(map[resource.Type]*typeSet, len(set))}
	versions := make(map[string]string, len(set))
	for typ, items := range set {
		if cachev3.GetResponseType(typ) == types.UnknownType {
			return nil, nil, fmt.Errorf("unknown resource type %s", typ)
		}
		var before *typeSet
		if prev != nil {
			before = prev.types[typ]
		}
		t := nextTypeSet(generation, before, items, sums[typ])
		snap.types[typ] = t
		versions[typ] = t.version
	}
	return snap, versions, nil
}

// GetVersion implements cachev3.ResourceSnapshot.
func (s *snapshot) GetVersion(typeURL string) string {
	if t := s.types[typeURL]; t != nil {
		return t.version
	}
	return ""
}

// GetResources returns the type's map; callers only read it.
func (s *snapshot) GetResources(typeURL string) map[string]types.Resource {
	if t := s.types[typeURL]; t != nil {
		return t.resources
	}
	return nil
}

// GetResourcesAndTTL returns the type's resources without TTLs (none is
// set), built on first use: only state-of-the-world clients ask.
func (s *snapshot) GetResourcesAndTTL(typeURL string) map[string]types.ResourceWithTTL {
	t := s.types[typeURL]
	if t == nil {
		return nil
	}
	t.ttlOnce.Do(func() {
		t.ttl = make(map[string]types.ResourceWithTTL, len(t.resources))
		for name, r := range t.resources {
			t.ttl[name] = types.ResourceWithTTL{Resource: r}
		}
	})
	return t.ttl
}

// ConstructVersionMap implements cachev3.ResourceSnapshot: the delta
// versions are built with the snapshot.
func (s *snapshot) ConstructVersionMap() error { return nil }

// GetVersionMap returns the type's delta versions; callers only read it.
func (s *snapshot) GetVersionMap(typeURL string) map[string]string {
	if t := s.types[typeURL]; t != nil {
		return t.versions
	}
	return nil
}
