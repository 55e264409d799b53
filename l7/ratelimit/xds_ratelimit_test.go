//go:build ratelimit

package ratelimit_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"

	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/ratelimit/configserver"
)

// xdsNode is the node ID the service presents to the xDS server.
const xdsNode = "ratelimit"

// xdsEnv points the service at an xDS server for its configuration.
func xdsEnv(addr string) []string {
	return []string{"CONFIG_TYPE=GRPC_XDS_SOTW", "CONFIG_GRPC_XDS_SERVER_URL=" + addr, "CONFIG_GRPC_XDS_NODE_ID=" + xdsNode}
}

// TestRealServiceOverXDS: the same limits, delivered as
// ServiceConfig.Proto over xDS (go-control-plane's server, as l7's is),
// reach the real service, and a new snapshot replaces them.
func TestRealServiceOverXDS(t *testing.T) {
	bin := serviceBinary(t)
	redis, err := redisproc.Start(context.Background(), t.TempDir(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redis.Stop)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	snapshots := cachev3.NewSnapshotCache(false, cachev3.IDHash{}, nil)
	gs := grpc.NewServer()
	discovery.RegisterAggregatedDiscoveryServiceServer(gs, serverv3.NewServer(ctx, snapshots, nil))
	// A unix socket, as deploy/ shares one between l7 and the service
	// (grpc-go dials unix:///PATH): the configuration is on no TCP port.
	sock := filepath.Join(shortDir(t), "rl-xds.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	publish := func(version string, cfgs ...ratelimit.ServiceConfig) {
		t.Helper()
		var res []types.Resource
		for _, c := range cfgs {
			res = append(res, configserver.Resource(c))
		}
		snap, err := cachev3.NewSnapshot(version, map[resource.Type][]types.Resource{resource.RateLimitConfigType: res})
		if err != nil {
			t.Fatal(err)
		}
		if err := snapshots.SetSnapshot(ctx, xdsNode, snap); err != nil {
			t.Fatal(err)
		}
	}

	shop := edgeRoutes[0]
	publish("1", serviceConfig(t, "edge", []ratelimit.RouteLimits{shop}))
	g := gateway{t: t, domain: "edge", svc: startService(t, bin, redis.Addr, xdsEnv("unix://"+sock))}
	clearOfWindowEnd(time.Minute, 3*time.Second)
	g.expect(shop, "192.0.2.1", 5, rlsv3.RateLimitResponse_OK)
	g.expect(shop, "192.0.2.1", 1, rlsv3.RateLimitResponse_OVER_LIMIT)

	added := ratelimit.RouteLimits{Route: "new/0", Global: &ratelimit.Global{PerClientIP: &ratelimit.Quota{Requests: 1, Unit: ratelimit.Hour}}}
	g.expect(added, "192.0.2.2", 2, rlsv3.RateLimitResponse_OK) // not configured yet: unlimited
	publish("2", serviceConfig(t, "edge", []ratelimit.RouteLimits{shop, added}))
	deadline := time.Now().Add(10 * time.Second)
	for g.call(added, "192.0.2.3").GetOverallCode() != rlsv3.RateLimitResponse_OVER_LIMIT {
		if time.Now().After(deadline) {
			t.Fatal("the service does not apply the new snapshot after 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shortDir is a new directory with a short path (a unix socket's path has
// about a hundred bytes), removed after the test.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
