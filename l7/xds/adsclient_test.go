package xds_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"
)

// sotwClient is a minimal state-of-the-world ADS client that behaves as
// Envoy does: it ACKs with the version and nonce it got.
type sotwClient struct {
	t      *testing.T
	node   *core.Node
	stream discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	cancel context.CancelFunc
	resp   chan *discovery.DiscoveryResponse
	errs   chan error
	// accepted holds, per type, the last ACKed version and resources.
	accepted map[string]*discovery.DiscoveryResponse
	// sentNode: the node went with the stream's first message; as Envoy
	// does with set_node_on_first_message_only (l7 bootstrap), later
	// messages carry none.
	sentNode bool
}

// nodeOnce returns the node for the stream's first message and nil after.
func nodeOnce(sent *bool, n *core.Node) *core.Node {
	if *sent {
		return nil
	}
	*sent = true
	return n
}

func newSotw(t *testing.T, cc grpc.ClientConnInterface, n *core.Node) *sotwClient {
	ctx, cancel := context.WithCancel(context.Background())
	st, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &sotwClient{t: t, node: n, stream: st, cancel: cancel, resp: make(chan *discovery.DiscoveryResponse, 64), errs: make(chan error, 1), accepted: map[string]*discovery.DiscoveryResponse{}}
	go func() {
		for {
			r, err := st.Recv()
			if err != nil {
				c.errs <- err
				return
			}
			c.resp <- r
		}
	}()
	t.Cleanup(cancel)
	return c
}

// request sends a discovery request. io.EOF means the server already
// ended the stream (a refused identity is refused at once): as in gRPC's
// contract, the stream's status then comes from Recv, so next reports it.
func (c *sotwClient) request(typ string, names []string, version, nonce string, nack *status.Status) {
	c.t.Helper()
	err := c.stream.Send(&discovery.DiscoveryRequest{Node: nodeOnce(&c.sentNode, c.node), TypeUrl: typ, ResourceNames: names, VersionInfo: version, ResponseNonce: nonce, ErrorDetail: nack})
	if err != nil && !errors.Is(err, io.EOF) {
		c.t.Fatalf("send %s request: %v", typ, err)
	}
}

// next waits for a response or fails.
func (c *sotwClient) next(within time.Duration) (*discovery.DiscoveryResponse, error) {
	select {
	case r := <-c.resp:
		return r, nil
	case err := <-c.errs:
		return nil, err
	case <-time.After(within):
		return nil, fmt.Errorf("no response within %v", within)
	}
}

// ack accepts a response.
func (c *sotwClient) ack(r *discovery.DiscoveryResponse, names []string) {
	c.accepted[r.GetTypeUrl()] = r
	c.request(r.GetTypeUrl(), names, r.GetVersionInfo(), r.GetNonce(), nil)
}

// deltaClient is a minimal delta ADS client.
type deltaClient struct {
	t      *testing.T
	node   *core.Node
	stream discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	resp   chan *discovery.DeltaDiscoveryResponse
	errs   chan error
	// have is name -> version per type, as Envoy tracks it.
	have map[string]map[string]string
	res  map[string]map[string]*anypb.Any
	// sentNode: as sotwClient's.
	sentNode bool
}

func newDelta(t *testing.T, cc grpc.ClientConnInterface, n *core.Node) *deltaClient {
	ctx, cancel := context.WithCancel(context.Background())
	st, err := discovery.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &deltaClient{t: t, node: n, stream: st, resp: make(chan *discovery.DeltaDiscoveryResponse, 64), errs: make(chan error, 1),
		have: map[string]map[string]string{}, res: map[string]map[string]*anypb.Any{}}
	go func() {
		for {
			r, err := st.Recv()
			if err != nil {
				c.errs <- err
				return
			}
			c.resp <- r
		}
	}()
	t.Cleanup(cancel)
	return c
}

// subscribe opens a type, telling the server the versions already held
// (after a reconnect).
func (c *deltaClient) subscribe(typ string, names []string, initial map[string]string) {
	c.t.Helper()
	if err := c.stream.Send(&discovery.DeltaDiscoveryRequest{Node: nodeOnce(&c.sentNode, c.node), TypeUrl: typ, ResourceNamesSubscribe: names, InitialResourceVersions: initial}); err != nil {
		c.t.Fatalf("subscribe %s: %v", typ, err)
	}
}

func (c *deltaClient) next(within time.Duration) (*discovery.DeltaDiscoveryResponse, error) {
	select {
	case r := <-c.resp:
		return r, nil
	case err := <-c.errs:
		return nil, err
	case <-time.After(within):
		return nil, fmt.Errorf("no response within %v", within)
	}
}

// apply records a response and ACKs it.
func (c *deltaClient) apply(r *discovery.DeltaDiscoveryResponse) {
	typ := r.GetTypeUrl()
	if c.have[typ] == nil {
		c.have[typ] = map[string]string{}
		c.res[typ] = map[string]*anypb.Any{}
	}
	for _, res := range r.GetResources() {
		c.have[typ][res.GetName()] = res.GetVersion()
		c.res[typ][res.GetName()] = res.GetResource()
	}
	for _, n := range r.GetRemovedResources() {
		delete(c.have[typ], n)
		delete(c.res[typ], n)
	}
	if err := c.stream.Send(&discovery.DeltaDiscoveryRequest{Node: nodeOnce(&c.sentNode, c.node), TypeUrl: typ, ResponseNonce: r.GetNonce()}); err != nil {
		c.t.Fatalf("ack %s: %v", typ, err)
	}
}

var allTypes = []string{resource.ClusterType, resource.EndpointType, resource.ListenerType, resource.RouteType, resource.SecretType}
