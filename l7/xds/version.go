package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/validate"
)

// typeVersion is the hash of one type's resources (sorted by name) from
// their content sums, prefixed with the generation. Equal content gives
// equal versions across restarts and replicas.
func typeVersion(generation string, items []types.Resource, sums []validate.Sum) string {
	h := sha256.New()
	for i, r := range items {
		name := cachev3.GetResourceName(r)
		_, _ = fmt.Fprintf(h, "%d:%s:", len(name), name)
		h.Write(sums[i][:])
	}
	return generation + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// buildSnapshot makes a snapshot whose versions are per type, so a change
// to endpoints does not resend listeners to state-of-the-world clients.
func buildSnapshot(generation string, set map[resource.Type][]types.Resource, sums map[resource.Type][]validate.Sum, hexOf func(validate.Sum) string) (*snapshot, map[string]string, error) {
	// The delta version map is go-control-plane's own (hex SHA-256 of the
	// deterministic encoding), filled from the sums already computed so
	// the cache does not encode every resource again.
	snap := &cachev3.Snapshot{VersionMap: map[string]map[string]string{}}
	versions := map[string]string{}
	for typ, items := range set {
		v := typeVersion(generation, items, sums[typ])
		idx := cachev3.GetResponseType(typ)
		if idx == types.UnknownType {
			return nil, nil, fmt.Errorf("unknown resource type %s", typ)
		}
		snap.Resources[idx] = cachev3.NewResources(v, items)
		versions[typ] = v
		vm := make(map[string]string, len(items))
		for i, r := range items {
			vm[cachev3.GetResourceName(r)] = hexOf(sums[typ][i])
		}
		snap.VersionMap[typ] = vm
	}
	typs := make([]string, 0, len(set))
	for typ := range set {
		typs = append(typs, typ)
	}
	return newSnapshot(snap, typs), versions, nil
}
