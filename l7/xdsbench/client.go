package xdsbench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/xds"
)

// gateway is one delta ADS client standing in for an Envoy gateway: it
// decodes every resource it gets and ACKs each response.
type gateway struct {
	cc     *grpc.ClientConn
	stream discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	node   *core.Node

	mu      sync.Mutex
	counts  map[string]int
	held    map[string][]byte // type|name -> version and bytes as received
	synced  chan struct{}
	want    int
	round   int
	seen    int
	done    chan time.Time
	errOnce sync.Once
	err     chan error
}

func dialGateway(ctx context.Context, addr string, id, services int) (*gateway, error) {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(512<<20)))
	if err != nil {
		return nil, err
	}
	st, err := discovery.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
	if err != nil {
		_ = cc.Close()
		return nil, fmt.Errorf("open ADS stream: %w", err)
	}
	md, _ := structpb.NewStruct(map[string]any{xds.MetaKind: "gateway", xds.MetaSchema: xds.Generation()})
	g := &gateway{cc: cc, stream: st, node: &core.Node{Id: fmt.Sprintf("gw-%02d", id), Cluster: "edge", Metadata: md},
		counts: map[string]int{}, held: map[string][]byte{}, synced: make(chan struct{}), want: services, done: make(chan time.Time, 1), err: make(chan error, 1)}
	names := make([]string, services)
	for i := range names {
		names[i] = model.ClusterName(fmt.Sprintf("svc-%05d", i), "main")
	}
	for _, sub := range []struct {
		typ   string
		names []string
	}{{resource.ClusterType, nil}, {resource.EndpointType, names}, {resource.ListenerType, nil}, {resource.RouteType, []string{RouteConfig}}} {
		if err := st.Send(&discovery.DeltaDiscoveryRequest{Node: g.node, TypeUrl: sub.typ, ResourceNamesSubscribe: sub.names}); err != nil {
			_ = cc.Close()
			return nil, fmt.Errorf("subscribe %s: %w", sub.typ, err)
		}
	}
	go g.receive()
	return g, nil
}

func (g *gateway) fail(err error) { g.errOnce.Do(func() { g.err <- err }) }

func (g *gateway) receive() {
	for {
		r, err := g.stream.Recv()
		if err != nil {
			g.fail(err)
			return
		}
		marked := 0
		g.mu.Lock()
		marker := MarkerPort(g.round)
		g.mu.Unlock()
		for _, res := range r.GetResources() {
			m, err := res.GetResource().UnmarshalNew()
			if err != nil {
				g.fail(fmt.Errorf("decode %s: %w", res.GetName(), err))
				return
			}
			if cla, ok := m.(*endpoint.ClusterLoadAssignment); ok && hasPort(cla, marker) {
				marked++
			}
		}
		if err := g.stream.Send(&discovery.DeltaDiscoveryRequest{Node: g.node, TypeUrl: r.GetTypeUrl(), ResponseNonce: r.GetNonce()}); err != nil {
			g.fail(err)
			return
		}
		now := time.Now()
		g.mu.Lock()
		g.counts[r.GetTypeUrl()] += len(r.GetResources())
		for _, res := range r.GetResources() {
			g.held[r.GetTypeUrl()+"|"+res.GetName()] = append([]byte(res.GetVersion()+"|"), res.GetResource().GetValue()...)
		}
		for _, name := range r.GetRemovedResources() {
			delete(g.held, r.GetTypeUrl()+"|"+name)
		}
		if g.counts[resource.EndpointType] >= g.want && g.counts[resource.ClusterType] >= g.want &&
			g.counts[resource.ListenerType] >= 1 && g.counts[resource.RouteType] >= 1 {
			select {
			case <-g.synced:
			default:
				close(g.synced)
			}
		}
		if g.round > 0 && marked > 0 {
			g.seen += marked
			if g.seen >= Changed {
				g.seen = -1 << 30 // report once per round
				g.done <- now
			}
		}
		g.mu.Unlock()
	}
}

func hasPort(cla *endpoint.ClusterLoadAssignment, port uint16) bool {
	for _, l := range cla.GetEndpoints() {
		for _, e := range l.GetLbEndpoints() {
			if e.GetEndpoint().GetAddress().GetSocketAddress().GetPortValue() == uint32(port) {
				return true
			}
		}
	}
	return false
}

func (g *gateway) startRound(k int) {
	g.mu.Lock()
	g.round, g.seen = k, 0
	g.mu.Unlock()
}

// digest is a hash of every resource the gateway holds: type, name,
// version and bytes.
func (g *gateway) digest() (string, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(g.held)) {
		h.Write([]byte(k))
		h.Write(g.held[k])
	}
	return hex.EncodeToString(h.Sum(nil)), len(g.held)
}
