package xds

import (
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// snapshot is go-control-plane's Snapshot with the per-type resource maps
// built once. The cache asks for them for every watch it answers (32
// gateways x 4 types on every change, and again on every ACK), and the
// stock Snapshot copies all N resources into a new map each time.
type snapshot struct {
	*cachev3.Snapshot
	plain map[string]map[string]types.Resource
}

var _ cachev3.ResourceSnapshot = (*snapshot)(nil)

func newSnapshot(s *cachev3.Snapshot, typeURLs []string) *snapshot {
	out := &snapshot{Snapshot: s, plain: map[string]map[string]types.Resource{}}
	for _, typ := range typeURLs {
		out.plain[typ] = s.GetResources(typ)
	}
	return out
}

// GetResources returns the shared map; callers only read it.
func (s *snapshot) GetResources(typeURL string) map[string]types.Resource {
	if m, ok := s.plain[typeURL]; ok {
		return m
	}
	return s.Snapshot.GetResources(typeURL)
}
