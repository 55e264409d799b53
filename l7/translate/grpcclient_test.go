package translate_test

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/tlbproject/tlb/l7/model"
)

type namedBackend struct {
	testgrpc.UnimplementedTestServiceServer
	name string
}

func (b *namedBackend) UnaryCall(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Hostname: b.name}, nil
}

// grpcBackend is a real gRPC server on loopback with the standard health
// service, answering with its name.
func grpcBackend(t *testing.T, name string) netip.AddrPort {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, &namedBackend{name: name})
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return netip.MustParseAddrPort(lis.Addr().String())
}

// TestProxylessClientAcceptsHealth: a real gRPC xDS client
// (google.golang.org/grpc/xds) accepts clusters carrying every health
// setting (active checks of each kind, outlier detection with 5xx
// ejection, all circuit breakers, slow start, ring hash) and sends RPCs
// through them; the server counts no NACK.
func TestProxylessClientAcceptsHealth(t *testing.T) {
	a, b := grpcBackend(t, "a"), grpcBackend(t, "b")
	ep := func(ap netip.AddrPort) []model.Endpoint { return []model.Endpoint{{Addr: ap, Weight: 1}} }
	cfg := model.Config{Services: []model.Service{{
		Name: "greeter", Group: "internal", Hosts: []string{"greeter.internal"},
		Upstreams: []model.Upstream{
			{Name: "grpc", HTTP2: true, Endpoints: ep(a),
				HealthCheck:      &model.HealthCheck{Protocol: model.HealthGRPC, GRPCService: "grpc.testing.TestService"},
				OutlierDetection: model.OutlierDetection{Consecutive5xx: 3, MaxEjectionPercent: 100},
				CircuitBreakers:  model.CircuitBreakers{MaxConnections: 10, MaxPendingRequests: 10, MaxRequests: 100, MaxRetries: 2},
				SlowStart:        time.Minute},
			{Name: "http", HTTP2: true, Endpoints: ep(b),
				HealthCheck: &model.HealthCheck{Protocol: model.HealthHTTP, Path: "/healthz", ExpectedStatuses: []model.StatusRange{{Min: 200, Max: 204}}}},
			{Name: "tcp", HTTP2: true, Endpoints: ep(a), HealthCheck: &model.HealthCheck{Protocol: model.HealthTCP},
				OutlierDetection: model.OutlierDetection{Disabled: true}},
			{Name: "sticky", HTTP2: true, Endpoints: ep(b)},
		},
		Routes: []model.Route{
			{Name: "http", Prefix: "/", Headers: []model.HeaderMatch{{Name: "x-to", Exact: "http"}}, Targets: []model.WeightedTarget{{Upstream: "http", Weight: 1}}},
			{Name: "tcp", Prefix: "/", Headers: []model.HeaderMatch{{Name: "x-to", Exact: "tcp"}}, Targets: []model.WeightedTarget{{Upstream: "tcp", Weight: 1}}},
			{Name: "sticky", Prefix: "/", Headers: []model.HeaderMatch{{Name: "x-to", Exact: "sticky"}}, Targets: []model.WeightedTarget{{Upstream: "sticky", Weight: 1}},
				Sticky: &model.CookieSticky{Cookie: "s"}},
			{Name: "grpc", Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "grpc", Weight: 1}}},
		},
	}}}

	client, reg, ctx := proxyless(t, cfg, "health-client")
	for _, tc := range []struct{ to, want string }{{"", "a"}, {"http", "b"}, {"tcp", "a"}, {"sticky", "b"}} {
		for i := 0; i < 5; i++ {
			rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
			if tc.to != "" {
				rctx = metadataTo(rctx, tc.to)
			}
			resp, err := client.UnaryCall(rctx, &testgrpc.SimpleRequest{}, grpc.WaitForReady(true))
			rcancel()
			if err != nil {
				t.Fatalf("RPC to cluster %q: %v (a NACKed cluster never becomes ready)", tc.to, err)
			}
			if resp.GetHostname() != tc.want {
				t.Fatalf("RPC to cluster %q answered by %q, want %q", tc.to, resp.GetHostname(), tc.want)
			}
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "tlb_l7_xds_nacks_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if v := m.GetCounter().GetValue(); v != 0 {
				t.Errorf("the client NACKed: %v", m)
			}
		}
	}
}

func metadataTo(ctx context.Context, to string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "x-to", to)
}
