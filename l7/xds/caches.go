package xds

import (
	"context"
	"strings"

	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	"github.com/tlbproject/tlb/l7/translate"
)

// kindCaches holds the snapshots of each client kind in a cache of its
// own, because the two kinds ask differently:
//
//   - Envoy gateways (ADS) ask for every cluster's endpoints and every
//     listener's routes by name; their cache holds a response until the
//     names requested cover the snapshot, so an Envoy never warms a
//     cluster with the endpoints of an older set (go-control-plane's "ads"
//     mode).
//   - A proxyless gRPC client asks for its own target's listener only,
//     never for all the group's hosts; in "ads" mode it would wait for
//     ever as soon as its group serves two hosts. Its cache answers the
//     names it asks for.
//
// Server reads and writes snapshots by key ("kind/group", see Key); the
// xDS server reaches the same caches through mux, which classifies a
// request by its node's kind.
type kindCaches struct {
	gateway cachev3.SnapshotCache
	grpc    cachev3.SnapshotCache
	mux     *cachev3.MuxCache
}

func newKindCaches(log cacheLogger) *kindCaches {
	c := &kindCaches{
		gateway: cachev3.NewSnapshotCache(true, nodeKey{}, log),
		grpc:    cachev3.NewSnapshotCache(false, nodeKey{}, log),
	}
	c.mux = &cachev3.MuxCache{
		Classify:      func(r *cachev3.Request) string { return string(kindOf(r.GetNode())) },
		ClassifyDelta: func(r *cachev3.DeltaRequest) string { return string(kindOf(r.GetNode())) },
		Caches: map[string]cachev3.Cache{
			string(translate.Gateway): c.gateway,
			string(translate.GRPC):    c.grpc,
		},
	}
	return c
}

// of returns the cache of the kind of key.
func (c *kindCaches) of(key string) cachev3.SnapshotCache {
	if strings.HasPrefix(key, string(translate.GRPC)+"/") {
		return c.grpc
	}
	return c.gateway
}

func (c *kindCaches) SetSnapshot(ctx context.Context, key string, snap cachev3.ResourceSnapshot) error {
	return c.of(key).SetSnapshot(ctx, key, snap)
}

func (c *kindCaches) ClearSnapshot(key string) { c.of(key).ClearSnapshot(key) }

func (c *kindCaches) GetSnapshot(key string) (cachev3.ResourceSnapshot, error) {
	return c.of(key).GetSnapshot(key)
}
