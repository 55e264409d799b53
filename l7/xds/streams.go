package xds

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlbproject/tlb/l7/translate"
)

// streamLog implements go-control-plane's callbacks: it refuses clients of
// another group or generation, and handles NACKs.
type streamLog struct {
	serverv3.CallbackFuncs
	s *Server

	mu   sync.Mutex
	sent map[int64]map[string]sentResponse // stream -> type -> last response
	ids  map[int64]Identity                // stream -> who the transport says it is
	seen map[int64]*streamSeen             // stream -> node, ACKs, NACKs (streammetrics.go)
	// nodes is the node each delta stream declared: Envoy sends it on a
	// stream's first message only (set_node_on_first_message_only), and
	// go-control-plane's delta server calls OnStreamDeltaRequest before it
	// restores the node itself (its SotW server restores it first).
	nodes map[int64]*core.Node
	// ACK times (acks.go): when each key's snapshot was published, when
	// each stream opened, and the last response of each stream and type
	// that waits for its ACK.
	publishedAt map[string]time.Time
	opened      map[int64]time.Time
	pending     map[int64]map[string]pendingAck
}

type sentResponse struct{ nonce, version string }

func newStreamLog(s *Server) *streamLog {
	return &streamLog{s: s, sent: map[int64]map[string]sentResponse{}, ids: map[int64]Identity{}, nodes: map[int64]*core.Node{},
		publishedAt: map[string]time.Time{}, opened: map[int64]time.Time{}, pending: map[int64]map[string]pendingAck{}}
}

// admit refuses a stream whose node declares another schema generation,
// another group than the server's, or a kind of client its transport
// identity does not grant. Refusing the whole stream before anything is
// sent means a client never holds a mix of two generations, and never
// receives what it may not have. A stream of the server's own group that
// arrives before the first Apply is admitted and waits: its client keeps
// what it has until there is something complete to send.
func (c *streamLog) admit(id int64, n *core.Node) error {
	if err := c.admitSchema(n); err != nil {
		return err
	}
	if n.GetCluster() != c.s.opts.Group {
		c.s.metrics.refused.WithLabelValues("group").Inc()
		c.s.log.Warn("refused xDS stream for another group", "node", n.GetId(), "group", n.GetCluster(), "serves", c.s.opts.Group)
		return status.Errorf(codes.PermissionDenied, "node %q asks for group %q; this control plane serves group %q only", n.GetId(), n.GetCluster(), c.s.opts.Group)
	}
	kind := kindOf(n)
	if !c.s.opts.serves(kind) {
		c.s.metrics.refused.WithLabelValues("kind").Inc()
		c.s.log.Warn("refused xDS stream for a kind of client this control plane does not serve", "node", n.GetId(), "kind", kind)
		return status.Errorf(codes.NotFound, "node %q: this control plane serves no %s clients", n.GetId(), kind)
	}
	c.mu.Lock()
	who := c.ids[id]
	c.mu.Unlock()
	if !who.Allows(kind, n.GetCluster()) {
		c.s.metrics.refused.WithLabelValues("identity").Inc()
		c.s.log.Warn("refused xDS stream: the client's identity does not grant what its node asks for", "node", n.GetId(), "kind", kind, "group", n.GetCluster(), "peer", who.Name)
		return status.Errorf(codes.PermissionDenied, "node %q: the client certificate does not grant %s of group %q", n.GetId(), kind, n.GetCluster())
	}
	return nil
}

// admitSchema refuses a node whose bootstrap does not fit this server's
// resources: a gateway that declares MetaBootstrap must declare the
// server's BootstrapGeneration (its bootstrap may come from an older l7:
// l7 upgrades do not restart Envoy); any other client must declare the
// server's Generation in MetaSchema.
func (c *streamLog) admitSchema(n *core.Node) error {
	fields := n.GetMetadata().GetFields()
	schema := fields[MetaSchema].GetStringValue()
	if boot, ok := fields[MetaBootstrap]; ok && kindOf(n) == translate.Gateway {
		if boot.GetStringValue() == c.s.bootstrapGeneration {
			return nil
		}
		c.s.metrics.refused.WithLabelValues("schema").Inc()
		c.s.log.Warn("refused xDS stream: its bootstrap was written for other resources", "node", n.GetId(),
			"bootstrap", boot.GetStringValue(), "want", c.s.bootstrapGeneration, "schema", schema)
		return status.Errorf(codes.FailedPrecondition, "node %q declares bootstrap %q; this control plane serves gateways of bootstrap %q only: restart the gateway with a bootstrap of this release",
			n.GetId(), boot.GetStringValue(), c.s.bootstrapGeneration)
	}
	if schema != c.s.generation {
		c.s.metrics.refused.WithLabelValues("schema").Inc()
		c.s.log.Warn("refused xDS stream from another generation", "node", n.GetId(), "schema", schema, "want", c.s.generation)
		return status.Errorf(codes.FailedPrecondition, "node %q declares schema %q; this control plane serves %q only", n.GetId(), schema, c.s.generation)
	}
	return nil
}

// kindOf is the kind of client a node declares (gateway by default).
func kindOf(n *core.Node) translate.Kind {
	if n.GetMetadata().GetFields()[MetaKind].GetStringValue() == string(translate.GRPC) {
		return translate.GRPC
	}
	return translate.Gateway
}

func (c *streamLog) open(ctx context.Context, id int64) {
	c.s.metrics.streams.Inc()
	who := identityOf(ctx, c.s.opts.TrustDomain)
	c.mu.Lock()
	c.ids[id] = who
	c.opened[id] = c.s.now()
	c.mu.Unlock()
}

func (c *streamLog) closed(id int64) {
	c.s.metrics.streams.Dec()
	c.mu.Lock()
	delete(c.sent, id)
	delete(c.ids, id)
	delete(c.seen, id)
	delete(c.nodes, id)
	delete(c.opened, id)
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *streamLog) OnStreamOpen(ctx context.Context, id int64, _ string) error {
	c.open(ctx, id)
	return nil
}

func (c *streamLog) OnStreamClosed(id int64, _ *core.Node) { c.closed(id) }

func (c *streamLog) OnDeltaStreamOpen(ctx context.Context, id int64, _ string) error {
	c.open(ctx, id)
	return nil
}

func (c *streamLog) OnDeltaStreamClosed(id int64, _ *core.Node) { c.closed(id) }

// nackType is the type label of a NACK: a type URL this server serves, or
// "other", so a client cannot create metric series at will.
func nackType(typ string) string {
	switch typ {
	case resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType, resource.SecretType:
		return typ
	}
	return "other"
}

// OnStreamRequest admits the node and handles a NACK: it logs it with the
// rejected resource names, counts it, and keeps the client on its last
// accepted version by not resending the version it rejected (the request
// is marked as holding it, so the watch fires only on a new version).
func (c *streamLog) OnStreamRequest(id int64, req *discovery.DiscoveryRequest) error {
	if err := c.admit(id, req.GetNode()); err != nil {
		return err
	}
	c.noteRequest(id, req)
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
	c.s.metrics.nacks.WithLabelValues(c.s.opts.Group, nackType(typ)).Inc()
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
	c.noteSent(id, req.GetNode(), resp.GetTypeUrl(), resp.GetNonce())
}

// OnStreamDeltaRequest admits the node and logs and counts NACKs. The
// delta server only resends resources whose version changes, so a NACKed
// resource is not resent until it changes.
func (c *streamLog) OnStreamDeltaRequest(id int64, req *discovery.DeltaDiscoveryRequest) error {
	c.mu.Lock()
	if req.GetNode() != nil {
		c.nodes[id] = req.GetNode()
	} else {
		req.Node = c.nodes[id]
	}
	c.noteAnswer(id, req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail() != nil)
	c.mu.Unlock()
	if err := c.admit(id, req.GetNode()); err != nil {
		return err
	}
	if req.GetErrorDetail() != nil {
		c.s.metrics.nacks.WithLabelValues(c.s.opts.Group, nackType(req.GetTypeUrl())).Inc()
		c.s.log.Warn("xDS NACK (delta)", "node", req.GetNode().GetId(), "key", nodeKey{}.ID(req.GetNode()),
			"type", req.GetTypeUrl(), "nonce", req.GetResponseNonce(), "error", req.GetErrorDetail().GetMessage())
	}
	return nil
}

// OnStreamDeltaResponse records the response for its ACK time.
func (c *streamLog) OnStreamDeltaResponse(id int64, _ *discovery.DeltaDiscoveryRequest, resp *discovery.DeltaDiscoveryResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noteSent(id, c.nodes[id], resp.GetTypeUrl(), resp.GetNonce())
}
