package translate_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/xds"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/translate"
	tlbxds "github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

// proxyless publishes cfg for group "internal" on a real xDS server and
// returns a real proxyless grpc-go client (node nodeID) of
// xds:///greeter.internal, the server's metrics registry and a context
// that ends with the test.
func proxyless(t *testing.T, cfg model.Config, nodeID string) (testgrpc.TestServiceClient, *prometheus.Registry, context.Context) {
	t.Helper()
	// The server on a unix socket, as in the pod: plain TCP has no identity.
	dir, err := os.MkdirTemp("", "xds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "xds.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reg := prometheus.NewRegistry()
	srv := tlbxds.New(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), reg, time.Now, tlbxds.Options{Group: "internal", Kinds: []translate.Kind{translate.Gateway, translate.GRPC}})
	gs := grpc.NewServer()
	srv.Register(gs)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() { gs.Stop(); cancel() })
	if rep := pipeline.New(model.NewResolver(), model.Options{}, time.Now, xdsbuild.New(srv)).Publish(ctx, cfg); len(rep.Problems) > 0 || len(rep.Invalid) > 0 {
		t.Fatalf("publish: %v %v", rep.Problems, rep.Invalid)
	}
	bootstrap := fmt.Sprintf(`{
  "xds_servers": [{"server_uri": %q, "channel_creds": [{"type": "insecure"}], "server_features": ["xds_v3"]}],
  "node": {"id": %q, "cluster": "internal", "metadata": {%q: "grpc", %q: %q}}
}`, "unix://"+sock, nodeID, tlbxds.MetaKind, tlbxds.MetaSchema, tlbxds.Generation())
	resolver, err := xds.NewXDSResolverWithConfigForTesting([]byte(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("xds:///greeter.internal", grpc.WithResolvers(resolver), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return testgrpc.NewTestServiceClient(cc), reg, ctx
}

// TestProxylessClientOfOneOfSeveralServices: a group with two services
// for proxyless clients; a grpc-go client asks for its target's listener
// alone (never all of them, unlike Envoy's wildcard LDS) and must be
// answered: the cache may not wait for requests that name every listener
// of the group.
func TestProxylessClientOfOneOfSeveralServices(t *testing.T) {
	a, b := grpcBackend(t, "a"), grpcBackend(t, "b")
	svc := func(name string, ap netip.AddrPort) model.Service {
		return model.Service{Name: name, Group: "internal", Hosts: []string{name + ".internal"},
			Upstreams: []model.Upstream{{Name: "grpc", HTTP2: true, Endpoints: []model.Endpoint{{Addr: ap, Weight: 1}}}},
			Routes:    []model.Route{{Name: "all", Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "grpc", Weight: 1}}}}}
	}
	cfg := model.Config{Services: []model.Service{svc("greeter", a), svc("other", b)}}
	client, reg, ctx := proxyless(t, cfg, "one-of-two")
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	resp, err := client.UnaryCall(rctx, &testgrpc.SimpleRequest{}, grpc.WaitForReady(true))
	if err != nil || resp.GetHostname() != "a" {
		t.Fatalf("RPC to greeter.internal: %v %v (want an answer from its backend a)", resp, err)
	}
	if nacks := counterSum(t, reg, "tlb_l7_xds_nacks_total"); nacks != 0 {
		t.Errorf("the client NACKed %v times", nacks)
	}
}
