package upstream

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/xds"

	"github.com/tlbproject/tlb/integration/envoyproc"
	tlbxds "github.com/tlbproject/tlb/l7/xds"
)

// grpcBackend is a real gRPC server that answers with its name.
type grpcBackend struct {
	testgrpc.UnimplementedTestServiceServer
	name string
	port int
}

func (b *grpcBackend) UnaryCall(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Hostname: b.name}, nil
}

func startGRPCBackend(t *testing.T, name, addr string) *grpcBackend {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	b := &grpcBackend{name: name, port: lis.Addr().(*net.TCPAddr).Port}
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, b)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return b
}

// TestProxylessGRPCThroughL7Serve: a proxyless gRPC client (grpc-go's
// own xDS resolver) of the l7 serve that also serves the gateway's Envoy
// (--grpc-clients, over the same unix socket, while Envoy's delta stream
// goes on beside it) calls real gRPC backends through the routes of a DSL
// file: a 3:1 split within binomial bounds, a header match, and an
// upstream named by DNS (localhost:PORT, which grpc-go resolves itself as
// a LOGICAL_DNS cluster). Nothing is NACKed.
func TestProxylessGRPCThroughL7Serve(t *testing.T) {
	stable := startGRPCBackend(t, "stable", "127.0.23.230:0")
	next := startGRPCBackend(t, "next", "127.0.0.1:0") // reached as localhost
	vip := "127.0.23.20"
	port := freePort(t, vip, 23110)
	g := startGateway(t, setup{hostIP: "127.0.23.109", serve: []string{"--grpc-clients"}, files: map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: grpc\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"greeter.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: greeter
group: edge
hosts: [greeter.internal]
upstreams:
  - {name: stable, http2: true, endpoints: ["127.0.23.230:%d"]}
  - {name: next, http2: true, endpoints: ["localhost:%d"]}
routes:
  - {name: pinned, prefix: /, headers: [{name: x-track, exact: next}], target: next}
  - name: split
    prefix: /
    targets: [{upstream: stable, weight: 3}, {upstream: next, weight: 1}]
`, stable.port, next.port),
	}})
	generation := l7Version(t)
	bootstrap := fmt.Sprintf(`{
  "xds_servers": [{"server_uri": %q, "channel_creds": [{"type": "insecure"}], "server_features": ["xds_v3"]}],
  "node": {"id": "proxyless-1", "cluster": %q, "metadata": {%q: "grpc", %q: %q}}
}`, "unix://"+g.XDSSocket, group, tlbxds.MetaKind, tlbxds.MetaSchema, generation)
	resolver, err := xds.NewXDSResolverWithConfigForTesting([]byte(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("xds:///greeter.internal", grpc.WithResolvers(resolver), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	client := testgrpc.NewTestServiceClient(cc)
	call := func(n int, md metadata.MD) map[string]int {
		out := map[string]int{}
		for i := 0; i < n; i++ {
			ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), 30*time.Second)
			resp, err := client.UnaryCall(ctx, &testgrpc.SimpleRequest{}, grpc.WaitForReady(true))
			cancel()
			if err != nil {
				t.Fatalf("RPC %d: %v", i, err)
			}
			out[resp.GetHostname()]++
		}
		return out
	}

	lo, hi := binomialBounds(splitRequests, 0.25, splitAlpha)
	got := call(splitRequests, nil)
	t.Logf("3:1 split over %d RPCs: %v (next bounds %d..%d)", splitRequests, got, lo, hi)
	if got["stable"]+got["next"] != splitRequests || got["next"] < lo || got["next"] > hi {
		t.Errorf("split %v, want next in %d..%d of %d", got, lo, hi, splitRequests)
	}
	if got := call(50, metadata.Pairs("x-track", "next")); got["next"] != 50 {
		t.Errorf("x-track: next went to %v, want all 50 on next (the DNS upstream)", got)
	}
	if n := metric(t, "http://"+g.Metrics+"/metrics", "tlb_l7_xds_nacks_total"); n != 0 {
		t.Errorf("tlb_l7_xds_nacks_total = %v: a client refused what l7 served", n)
	}
	if n := metric(t, "http://"+g.Metrics+"/metrics", "tlb_l7_xds_streams"); n < 2 {
		t.Errorf("tlb_l7_xds_streams = %v, want Envoy's and the gRPC client's", n)
	}
}

// l7Version is the generation of the l7 binary the gateway runs.
func l7Version(t *testing.T) string {
	t.Helper()
	bin, err := envoyproc.L7Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// metric sums the samples of a Prometheus metric at url.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, name+" ") && !strings.HasPrefix(l, name+"{") {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}
