package xds

import (
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// ACK times: for the last response sent on each stream and type, the
// server keeps since when the version it carries could reach that
// client: the start of the change that made it (Update.Start), or the stream's opening
// when that is later (an initial sync). When the client acknowledges that
// response, the time since then is observed in
// tlb_l7_xds_ack_delay_seconds{group,type}: how long a published change
// takes to be running in the gateways, the server's build, the push and
// the client's apply included. SotW and delta streams alike (Envoy's
// bootstrap asks for delta ADS).

// pendingAck is a response waiting for its ACK.
type pendingAck struct {
	nonce string
	since time.Time
}

// published records that key's snapshot about to be set comes from a
// change that started at start (Apply). It returns what it replaced, for
// restoring when the snapshot could not be set.
func (c *streamLog) published(key string, start time.Time) (prev time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev = c.publishedAt[key]
	c.publishedAt[key] = start
	return prev
}

// unpublish puts back what published replaced.
func (c *streamLog) unpublish(key string, prev time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.publishedAt[key] = prev
}

// noteSent records a response about to be sent on stream id to node n.
// c.mu must be held.
func (c *streamLog) noteSent(id int64, n *core.Node, typ, nonce string) {
	since := c.publishedAt[nodeKey{}.ID(n)]
	if opened := c.opened[id]; opened.After(since) {
		since = opened
	}
	if c.pending[id] == nil {
		c.pending[id] = map[string]pendingAck{}
	}
	c.pending[id][typ] = pendingAck{nonce: nonce, since: since}
}

// noteAnswer records the client's answer on stream id to the response
// of typ with nonce: an ACK observes the delay, a NACK only ends the wait.
// An answer to an older response than the last sent is ignored. c.mu must
// be held.
func (c *streamLog) noteAnswer(id int64, typ, nonce string, nack bool) {
	p, ok := c.pending[id][typ]
	if !ok || nonce == "" || p.nonce != nonce {
		return
	}
	delete(c.pending[id], typ)
	if nack || p.since.IsZero() {
		return
	}
	c.s.metrics.ackDelay.WithLabelValues(c.s.opts.Group, nackType(typ)).Observe(c.s.now().Sub(p.since).Seconds())
}
