package xds_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/xds"

	"github.com/tlbproject/tlb/l7/model"
	tlbxds "github.com/tlbproject/tlb/l7/xds"
)

// backend is a real gRPC server on loopback that answers with its name.
type backend struct {
	testgrpc.UnimplementedTestServiceServer
	name string
	addr netip.AddrPort
}

func (b *backend) UnaryCall(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Hostname: b.name}, nil
}

func startBackend(t *testing.T, name string) *backend {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{name: name, addr: netip.MustParseAddrPort(lis.Addr().String())}
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, b)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return b
}

// greeterConfig routes x-track: next to "next", the rest 3:1 between
// "stable" and "next".
func greeterConfig(stable, next netip.AddrPort) model.Config {
	return model.Config{Services: []model.Service{{
		Name: "greeter", Group: "internal", Hosts: []string{"greeter.internal"},
		Upstreams: []model.Upstream{
			{Name: "stable", HTTP2: true, Endpoints: []model.Endpoint{{Addr: stable}}},
			{Name: "next", HTTP2: true, Endpoints: []model.Endpoint{{Addr: next}}},
		},
		Routes: []model.Route{
			{Name: "pinned", Prefix: "/", Headers: []model.HeaderMatch{{Name: "x-track", Exact: "next"}}, Targets: []model.WeightedTarget{{Upstream: "next", Weight: 1}}},
			{Name: "split", Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "stable", Weight: 3}, {Upstream: "next", Weight: 1}}},
		},
	}}}
}

func grpcBootstrap(server, nodeID string) []byte {
	return []byte(fmt.Sprintf(`{
  "xds_servers": [{"server_uri": %q, "channel_creds": [{"type": "insecure"}], "server_features": ["xds_v3"]}],
  "node": {"id": %q, "cluster": "internal", "metadata": {%q: "grpc", %q: %q}}
}`, server, nodeID, tlbxds.MetaKind, tlbxds.MetaSchema, tlbxds.Generation()))
}

func count(t *testing.T, client testgrpc.TestServiceClient, n int, md metadata.MD) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), 5*time.Second)
		resp, err := client.UnaryCall(ctx, &testgrpc.SimpleRequest{}, grpc.WaitForReady(true))
		cancel()
		if err != nil {
			t.Fatalf("RPC %d: %v", i, err)
		}
		out[resp.GetHostname()]++
	}
	return out
}

// TestProxylessGRPCClient drives real gRPC xDS clients from
// google.golang.org/grpc/xds against the server: weighted split, header
// match, and an EDS change that moves traffic without a new client.
func TestProxylessGRPCClient(t *testing.T) {
	a, b, c := startBackend(t, "a"), startBackend(t, "b"), startBackend(t, "c")
	r := startGroupServer(t, "", "internal")
	rep := r.pub.Publish(context.Background(), greeterConfig(a.addr, b.addr))
	if len(rep.Problems) > 0 || len(rep.Invalid) > 0 {
		t.Fatalf("publish: %v %v", rep.Problems, rep.Invalid)
	}
	resolver, err := xds.NewXDSResolverWithConfigForTesting(grpcBootstrap(r.addr, "grpc-client-1"))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("xds:///greeter.internal", grpc.WithResolvers(resolver), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := testgrpc.NewTestServiceClient(cc)

	t.Run("weighted split 3:1", func(t *testing.T) {
		got := count(t, client, 400, nil)
		if got["c"] != 0 || got["a"]+got["b"] != 400 {
			t.Fatalf("split = %v", got)
		}
		// 3:1 means a gets 300 of 400 on average; binomial sd is about 9.
		if got["a"] < 255 || got["a"] > 345 {
			t.Fatalf("split = %v; want about 300 a and 100 b", got)
		}
	})
	t.Run("header match", func(t *testing.T) {
		got := count(t, client, 50, metadata.Pairs("x-track", "next"))
		if got["b"] != 50 {
			t.Fatalf("with x-track: next got %v, want all 50 on b", got)
		}
	})
	t.Run("EDS change moves traffic", func(t *testing.T) {
		r.pub.Publish(context.Background(), greeterConfig(c.addr, b.addr))
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := count(t, client, 40, nil)
			if got["a"] == 0 && got["c"] > 0 {
				return // stable's traffic moved from a to c, same client
			}
			if time.Now().After(deadline) {
				t.Fatalf("traffic did not move from a to c: %v", got)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}
