// Package configserver serves the configuration of the envoyproxy/ratelimit
// service over xDS, as the service fetches it when run with
// CONFIG_TYPE=GRPC_XDS_SOTW: one RateLimitConfig resource per domain (a
// gateway group), built by l7/ratelimit from the same limits the gateways'
// routes carry, so the descriptors Envoy sends always find their limits.
//
// It owns the snapshot of those resources and the aggregated discovery
// service that streams it. It does not decide what the limits are (the
// caller builds them with ratelimit.Service) and does not listen: the
// caller registers it on a gRPC server bound to loopback, since the service
// beside it in its pod is its only client (the control interface is not
// exposed). Every client node is served the same snapshot.
package configserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/ratelimit"
)

// snapshotKey is the one key of the snapshot cache: every node gets it.
const snapshotKey = "ratelimit"

type anyNode struct{}

func (anyNode) ID(*core.Node) string { return snapshotKey }

// Server serves the rate limit service's configuration. It is safe for
// concurrent use.
type Server struct {
	cache cachev3.SnapshotCache
	xds   serverv3.Server

	mu      sync.Mutex
	version string
}

// New returns a Server with nothing to serve yet: a client's request
// waits until the first Set (the service then starts without limits
// rather than with wrong ones). It stops serving when ctx ends.
func New(ctx context.Context) *Server {
	s := &Server{cache: cachev3.NewSnapshotCache(false, anyNode{}, nil)}
	s.xds = serverv3.NewServer(ctx, s.cache, nil)
	return s
}

// Register adds the aggregated discovery service to g.
func (s *Server) Register(g *grpc.Server) {
	discovery.RegisterAggregatedDiscoveryServiceServer(g, s.xds)
}

// Set makes cfgs the served configuration, one resource per domain, and
// reports whether it changed. The version is a hash of the content, so an
// equal configuration is not sent again and every l7 serving the same
// limits serves the same version. Domains must be distinct.
func (s *Server) Set(ctx context.Context, cfgs ...ratelimit.ServiceConfig) (bool, error) {
	h := sha256.New()
	res := make([]types.Resource, 0, len(cfgs))
	seen := map[string]bool{}
	for _, c := range cfgs {
		if seen[c.Domain] {
			return false, fmt.Errorf("rate limit configuration: domain %q given twice", c.Domain)
		}
		seen[c.Domain] = true
		p := Resource(c)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
		if err != nil {
			return false, fmt.Errorf("rate limit configuration of %s: %w", c.Domain, err)
		}
		_, _ = fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
		res = append(res, p)
	}
	version := hex.EncodeToString(h.Sum(nil))[:16]
	s.mu.Lock()
	defer s.mu.Unlock()
	if version == s.version {
		return false, nil
	}
	snap, err := cachev3.NewSnapshot(version, map[resource.Type][]types.Resource{resource.RateLimitConfigType: res})
	if err != nil {
		return false, fmt.Errorf("rate limit configuration snapshot: %w", err)
	}
	if err := s.cache.SetSnapshot(ctx, snapshotKey, snap); err != nil {
		return false, fmt.Errorf("rate limit configuration snapshot: %w", err)
	}
	s.version = version
	return true, nil
}

// Version returns the served version, "" before the first Set.
func (s *Server) Version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}
