package xds_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is an xDS server on a unix socket, as in the gateway pod.
type running struct {
	srv  *xds.Server
	pub  *pipeline.Pipeline
	reg  *prometheus.Registry
	logs *syncBuffer
	addr string
	gs   *grpc.Server
}

// startServer runs a Server on addr: "" for a new unix socket, or the
// addr of a stopped server to restart on its socket.
func startServer(t *testing.T, addr string) *running { return startGroupServer(t, addr, "edge") }

// startGroupServer runs a Server of group on addr (see startServer).
func startGroupServer(t *testing.T, addr, group string) *running {
	t.Helper()
	if addr == "" {
		dir, err := os.MkdirTemp("", "xds") // short: a socket path has ~100 bytes
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		addr = "unix://" + filepath.Join(dir, "xds.sock")
	}
	path := strings.TrimPrefix(addr, "unix://")
	_ = os.Remove(path) // the socket of a stopped server
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := prometheus.NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	srv := xds.New(ctx, log, reg, time.Now, xds.Options{Group: group, Kinds: []translate.Kind{translate.Gateway, translate.GRPC}})
	gs := grpc.NewServer()
	srv.Register(gs)
	go func() { _ = gs.Serve(lis) }()
	r := &running{srv: srv, pub: publisher(srv), reg: reg, logs: logs, addr: addr, gs: gs}
	t.Cleanup(func() { gs.Stop(); cancel() })
	return r
}

func (r *running) stop() { r.gs.Stop() }

// publisher is the pipeline l7 serve runs in front of srv: resolve, then
// translate and validate (xdsbuild), then srv.
func publisher(srv *xds.Server) *pipeline.Pipeline {
	return pipeline.New(model.NewResolver(), model.Options{}, time.Now, xdsbuild.New(srv))
}

func node(id, group, kind, schema string) *core.Node {
	md, _ := structpb.NewStruct(map[string]any{xds.MetaKind: kind, xds.MetaSchema: schema})
	return &core.Node{Id: id, Cluster: group, Metadata: md}
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// edgeConfig is a small config fed through the model API, as a
// Kubernetes controller would.
func edgeConfig(endpoints ...string) model.Config {
	var eps []model.Endpoint
	for _, e := range endpoints {
		eps = append(eps, model.Endpoint{Addr: ap(e), Weight: 1})
	}
	return model.Config{
		Gateways: []model.Gateway{{Name: "public", Group: "edge", Listeners: []model.Listener{
			{Name: "web", VIP: netip.MustParseAddr("203.0.113.10"), Port: 80, Protocol: model.HTTP},
			{Name: "secure", VIP: netip.MustParseAddr("203.0.113.10"), Port: 443, Protocol: model.HTTPS,
				TLS: []model.SNICertificate{{ServerNames: []string{"shop.example.com"}, Certificate: "shop"}}},
		}}},
		Certificates: []model.Certificate{{Name: "shop", Gateway: model.GatewayID{Name: "public"}, Chain: []byte(testChain), Key: model.NewPrivateKey([]byte(testKey))}},
		Services: []model.Service{
			{Name: "shop", Group: "edge", Hosts: []string{"shop.example.com"}, Listeners: []model.ListenerRef{{Gateway: "public", Listener: "secure"}},
				Upstreams: []model.Upstream{{Name: "v1", Endpoints: eps}, {Name: "v2", Endpoints: []model.Endpoint{{Addr: ap("198.51.100.30:8080")}}}},
				Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "v1", Weight: 9}, {Upstream: "v2", Weight: 1}}}}},
			{Name: "todo", Group: "edge", Listeners: []model.ListenerRef{{Gateway: "public", Listener: "web"}},
				Upstreams: []model.Upstream{{Name: "main", Endpoints: []model.Endpoint{{Addr: ap("198.51.100.10:8082")}}}},
				Routes:    []model.Route{{Prefix: "/todo/", Targets: []model.WeightedTarget{{Upstream: "main"}}}}},
		},
	}
}

// schema is the generation this build serves, which clients declare.
var schema = xds.Generation()

// A placeholder certificate and key for tests that need an HTTPS listener.
const testChain = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
const testKey = "-----BEGIN PRIVATE KEY-----\nS3CRETKEYMATERIALDONOTLOG0123456789\n-----END PRIVATE KEY-----\n"
