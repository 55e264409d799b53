package xds

import (
	"context"
	"maps"
	"slices"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// streamLog implements go-control-plane's callbacks: it refuses clients of
// another group or generation, and handles NACKs.
type streamLog struct {
	serverv3.CallbackFuncs
	s *Server

	mu   sync.Mutex
	sent map[int64]map[string]sentResponse // stream -> type -> last response
}

type sentResponse struct{ nonce, version string }

func newStreamLog(s *Server) *streamLog {
	return &streamLog{s: s, sent: map[int64]map[string]sentResponse{}}
}

// admit refuses a node that does not name a served group and this
// server's schema generation. Refusing the whole stream means a client
// never holds a mix of two generations.
func (c *streamLog) admit(n *core.Node) error {
	schema := n.GetMetadata().GetFields()[MetaSchema].GetStringValue()
	if schema != Schema {
		c.s.metrics.refused.WithLabelValues("schema").Inc()
		c.s.log.Warn("refused xDS stream from another generation", "node", n.GetId(), "group", n.GetCluster(), "schema", schema, "want", Schema)
		return status.Errorf(codes.FailedPrecondition, "node %q declares schema %q; this control plane serves %q only", n.GetId(), schema, Schema)
	}
	key := nodeKey{}.ID(n)
	if !c.s.serves(key) {
		c.s.metrics.refused.WithLabelValues("group").Inc()
		c.s.log.Warn("refused xDS stream for a group not served", "node", n.GetId(), "key", key)
		return status.Errorf(codes.NotFound, "node %q: group %q is not served by this control plane (key %s)", n.GetId(), n.GetCluster(), key)
	}
	return nil
}

func (c *streamLog) OnStreamOpen(context.Context, int64, string) error {
	c.s.metrics.streams.Inc()
	return nil
}

func (c *streamLog) OnStreamClosed(id int64, _ *core.Node) {
	c.s.metrics.streams.Dec()
	c.mu.Lock()
	delete(c.sent, id)
	c.mu.Unlock()
}

func (c *streamLog) OnDeltaStreamOpen(context.Context, int64, string) error {
	c.s.metrics.streams.Inc()
	return nil
}

func (c *streamLog) OnDeltaStreamClosed(int64, *core.Node) { c.s.metrics.streams.Dec() }

// OnStreamRequest admits the node and handles a NACK: it logs it with the
// rejected resource names, counts it, and keeps the client on its last
// accepted version by not resending the version it rejected (the request
// is marked as holding it, so the watch fires only on a new version).
func (c *streamLog) OnStreamRequest(id int64, req *discovery.DiscoveryRequest) error {
	if err := c.admit(req.GetNode()); err != nil {
		return err
	}
	if req.GetErrorDetail() == nil {
		return nil
	}
	typ := req.GetTypeUrl()
	key := nodeKey{}.ID(req.GetNode())
	c.mu.Lock()
	last := c.sent[id][typ]
	c.mu.Unlock()
	var names []string
	if snap, err := c.s.cache.GetSnapshot(key); err == nil && snap.GetVersion(typ) == last.version {
		names = slices.Sorted(maps.Keys(snap.GetResources(typ)))
	}
	c.s.metrics.nacks.WithLabelValues(req.GetNode().GetCluster(), typ).Inc()
	c.s.log.Warn("xDS NACK", "node", req.GetNode().GetId(), "key", key, "type", typ,
		"rejectedVersion", last.version, "keptVersion", req.GetVersionInfo(),
		"resources", names, "error", req.GetErrorDetail().GetMessage())
	if last.version != "" && last.nonce == req.GetResponseNonce() && c.s.currentVersion(key, typ) == last.version {
		req.VersionInfo = last.version
	}
	return nil
}

func (c *streamLog) OnStreamResponse(_ context.Context, id int64, req *discovery.DiscoveryRequest, resp *discovery.DiscoveryResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sent[id] == nil {
		c.sent[id] = map[string]sentResponse{}
	}
	c.sent[id][resp.GetTypeUrl()] = sentResponse{nonce: resp.GetNonce(), version: resp.GetVersionInfo()}
}

// OnStreamDeltaRequest admits the node and logs and counts NACKs. The
// delta server only resends resources whose version changes, so a NACKed
// resource is not resent until it changes.
func (c *streamLog) OnStreamDeltaRequest(_ int64, req *discovery.DeltaDiscoveryRequest) error {
	if err := c.admit(req.GetNode()); err != nil {
		return err
	}
	if req.GetErrorDetail() != nil {
		c.s.metrics.nacks.WithLabelValues(req.GetNode().GetCluster(), req.GetTypeUrl()).Inc()
		c.s.log.Warn("xDS NACK (delta)", "node", req.GetNode().GetId(), "key", nodeKey{}.ID(req.GetNode()),
			"type", req.GetTypeUrl(), "nonce", req.GetResponseNonce(), "error", req.GetErrorDetail().GetMessage())
	}
	return nil
}
