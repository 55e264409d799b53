package translate_test

import (
	"context"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/tlbproject/tlb/l7/model"
)

// TestProxylessClientAndUpstreamTLS: a proxyless gRPC client (grpc-go,
// which NACKs a cluster with an inline CA, and then cannot use the other
// clusters of the update either) gets no TLS cluster: the route to it
// fails, the route to the other cluster works, and nothing is NACKed.
func TestProxylessClientAndUpstreamTLS(t *testing.T) {
	ca, err := os.ReadFile("../testdata/config/certs/test-ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	a := grpcBackend(t, "a")
	ep := func(ap netip.AddrPort) []model.Endpoint { return []model.Endpoint{{Addr: ap, Weight: 1}} }
	cfg := model.Config{Services: []model.Service{{
		Name: "greeter", Group: "internal", Hosts: []string{"greeter.internal"},
		Upstreams: []model.Upstream{
			{Name: "plain", HTTP2: true, Endpoints: ep(a)},
			{Name: "secure", HTTP2: true, Endpoints: ep(a), TLS: &model.UpstreamTLS{SNI: "greeter.internal", CA: ca}},
		},
		Routes: []model.Route{
			{Name: "secure", Prefix: "/", Headers: []model.HeaderMatch{{Name: "x-to", Exact: "secure"}}, Targets: []model.WeightedTarget{{Upstream: "secure", Weight: 1}}},
			{Name: "plain", Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "plain", Weight: 1}}},
		},
	}}}

	client, reg, ctx := proxyless(t, cfg, "tls-client")
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	resp, err := client.UnaryCall(rctx, &testgrpc.SimpleRequest{}, grpc.WaitForReady(true))
	rcancel()
	if err != nil || resp.GetHostname() != "a" {
		t.Fatalf("RPC to the plain cluster: %v %v", resp, err)
	}
	rctx, rcancel = context.WithTimeout(metadataTo(ctx, "secure"), 10*time.Second)
	_, err = client.UnaryCall(rctx, &testgrpc.SimpleRequest{})
	rcancel()
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("RPC on the route to the TLS upstream: %v, want UNAVAILABLE (never plain text, never another route)", err)
	}
	if nacks := counterSum(t, reg, "tlb_l7_xds_nacks_total"); nacks != 0 {
		t.Errorf("the client NACKed %v times", nacks)
	}
}

func counterSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
