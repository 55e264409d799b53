package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
)

// Schema is the generation of this control plane's translation: the DSL
// kinds it reads and the resources it produces. Gateways declare the
// generation they were built for in their bootstrap (node metadata
// "tlb.schema"); the server refuses any other.
const Schema = "tlb.l7.v1"

// typeVersion is the content hash of one type's resources, which are
// sorted by name. Equal content gives equal versions across restarts.
func typeVersion(items []types.Resource) (string, error) {
	h := sha256.New()
	opts := proto.MarshalOptions{Deterministic: true}
	for _, r := range items {
		b, err := opts.Marshal(r)
		if err != nil {
			return "", fmt.Errorf("marshal %s for its version: %w", cachev3.GetResourceName(r), err)
		}
		name := cachev3.GetResourceName(r)
		fmt.Fprintf(h, "%d:%s:%d:", len(name), name, len(b))
		h.Write(b)
	}
	return Schema + "-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildSnapshot makes a snapshot whose versions are per type, so a change
// to endpoints does not resend listeners to state-of-the-world clients.
func buildSnapshot(set map[resource.Type][]types.Resource) (*cachev3.Snapshot, map[string]string, error) {
	snap := &cachev3.Snapshot{}
	versions := map[string]string{}
	for typ, items := range set {
		v, err := typeVersion(items)
		if err != nil {
			return nil, nil, err
		}
		idx := cachev3.GetResponseType(typ)
		if idx == types.UnknownType {
			return nil, nil, fmt.Errorf("unknown resource type %s", typ)
		}
		snap.Resources[idx] = cachev3.NewResources(v, items)
		versions[typ] = v
	}
	return snap, versions, nil
}
