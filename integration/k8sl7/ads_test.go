//go:build k8s

package k8sl7

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	tlbxds "github.com/tlbproject/tlb/l7/xds"
)

// startXDS runs the real xDS server on a unix socket (as in the gateway
// pod: plain TCP has no identity) until the end of the test and returns
// its address.
func startXDS(t *testing.T, ctx context.Context, srv *tlbxds.Server) string {
	t.Helper()
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
	gs := grpc.NewServer()
	srv.Register(gs)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return "unix://" + sock
}

// adsStream is a state-of-the-world ADS client for one resource type,
// acting as a gateway of one group.
type adsStream struct {
	stream discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	node   *core.Node
	typ    string
	names  []string
	resps  chan *discovery.DiscoveryResponse
	err    error // why the stream ended; read after resps is closed
}

// openADS opens a stream to addr as a gateway of group and subscribes to
// names of type typ.
func openADS(t *testing.T, ctx context.Context, addr, group, typ string, names ...string) *adsStream {
	t.Helper()
	return openADSAt(t, ctx, addr, group, typ, "", names...)
}

// openADSAt is openADS for a client that already holds version of typ.
func openADSAt(t *testing.T, ctx context.Context, addr, group, typ, version string, names ...string) *adsStream {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	st, err := discovery.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := &adsStream{stream: st, typ: typ, names: names, resps: make(chan *discovery.DiscoveryResponse, 16),
		node: &core.Node{Id: "k8sl7-test", Cluster: group, Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
			tlbxds.MetaSchema: structpb.NewStringValue(tlbxds.Generation()),
		}}}}
	if err := st.Send(&discovery.DiscoveryRequest{Node: a.node, TypeUrl: typ, ResourceNames: names, VersionInfo: version}); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(a.resps)
		for {
			r, err := st.Recv()
			if err != nil {
				a.err = err
				return
			}
			a.resps <- r
			// ACK, so the server sends the next version.
			_ = st.Send(&discovery.DiscoveryRequest{Node: a.node, TypeUrl: typ, ResourceNames: names, VersionInfo: r.VersionInfo, ResponseNonce: r.Nonce})
		}
	}()
	return a
}

// waitFor returns the first response for which ok holds, failing the test
// after d.
func (a *adsStream) waitFor(t *testing.T, d time.Duration, what string, ok func(*discovery.DiscoveryResponse) (bool, string)) *discovery.DiscoveryResponse {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	last := "no response"
	for {
		select {
		case r, open := <-a.resps:
			if !open {
				t.Fatalf("%s: ADS stream closed (%v); last: %s", what, a.err, last)
			}
			var good bool
			if good, last = ok(r); good {
				return r
			}
		case <-timer.C:
			t.Fatalf("%s: not received within %s; last: %s", what, d, last)
		}
	}
}

// resourceName decodes one resource of an xDS response and returns its name.
func resourceName(t *testing.T, typ string, a *anypb.Any) string {
	t.Helper()
	m, err := a.UnmarshalNew()
	if err != nil {
		t.Fatalf("decode %s: %v", typ, err)
	}
	return cachev3.GetResourceName(m.(types.Resource))
}
