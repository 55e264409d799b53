package xds

import (
	"slices"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/prometheus/client_golang/prometheus"
)

// streamSeen is what the server knows of one admitted SotW stream beyond
// what it sent: the node on it, the version it acknowledged last and the
// NACKs it sent, by type URL.
type streamSeen struct {
	node, key string
	acked     map[string]string
	nacks     map[string]int
}

// noteRequest records the node of an admitted stream, and an ACK (a
// request without error detail answering the last response sent on the
// stream) or a NACK. It must run before a NACK's version is rewritten.
func (c *streamLog) noteRequest(id int64, req *discovery.DiscoveryRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[int64]*streamSeen{}
	}
	st := c.seen[id]
	if st == nil {
		st = &streamSeen{acked: map[string]string{}, nacks: map[string]int{}}
		c.seen[id] = st
	}
	st.node, st.key = req.GetNode().GetId(), nodeKey{}.ID(req.GetNode())
	typ := nackType(req.GetTypeUrl())
	last, sent := c.sent[id][req.GetTypeUrl()]
	switch {
	case req.GetErrorDetail() != nil:
		st.nacks[typ]++
	case sent && req.GetResponseNonce() == last.nonce:
		st.acked[typ] = req.GetVersionInfo()
	}
	c.noteAnswer(id, req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail() != nil)
}

// streamCollector exports, per gateway stream (node id) and type, the
// version last served and last acknowledged, whether the acknowledged one
// is the current one, and the NACKs. Node ids are those of admitted
// streams only (the transport identity allows them), their series go when
// the stream closes, and a node with two streams at once (a reconnect
// overlapping the old stream) reports its newest.
type streamCollector struct {
	c                          *streamLog
	group                      string
	served, acked, sync, nacks *prometheus.Desc
}

func registerStreamCollector(reg prometheus.Registerer, c *streamLog, group string) {
	if reg == nil {
		return
	}
	l := []string{"group", "node", "type"}
	lv := []string{"group", "node", "type", "version"}
	reg.MustRegister(streamCollector{c: c, group: group,
		served: prometheus.NewDesc("tlb_l7_xds_stream_served_version_info",
			"Version last sent on the node's SotW stream, per type (value 1).", lv, nil),
		acked: prometheus.NewDesc("tlb_l7_xds_stream_acked_version_info",
			"Version the node last acknowledged on its SotW stream, per type (value 1).", lv, nil),
		sync: prometheus.NewDesc("tlb_l7_xds_stream_in_sync",
			"1 when the version the node acknowledged is the current snapshot version of its group, else 0.", l, nil),
		nacks: prometheus.NewDesc("tlb_l7_xds_stream_nacks_total",
			"NACKs the node sent on its current stream, per type.", l, nil),
	})
}

// Describe implements prometheus.Collector.
func (sc streamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sc.served
	ch <- sc.acked
	ch <- sc.sync
	ch <- sc.nacks
}

type streamRow struct {
	node, key string
	served    map[string]string
	seen      streamSeen
}

// Collect implements prometheus.Collector.
func (sc streamCollector) Collect(ch chan<- prometheus.Metric) {
	byNode := map[string]streamRow{}
	sc.c.mu.Lock()
	ids := make([]int64, 0, len(sc.c.seen))
	for id := range sc.c.seen {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a later stream of the same node wins
	for _, id := range ids {
		st := sc.c.seen[id]
		row := streamRow{node: st.node, key: st.key, served: map[string]string{},
			seen: streamSeen{acked: clone(st.acked), nacks: clone(st.nacks)}}
		for typ, r := range sc.c.sent[id] {
			row.served[nackType(typ)] = r.version
		}
		byNode[st.node] = row
	}
	sc.c.mu.Unlock()

	for _, row := range byNode {
		for typ, v := range row.served {
			ch <- prometheus.MustNewConstMetric(sc.served, prometheus.GaugeValue, 1, sc.group, row.node, typ, v)
		}
		for typ, v := range row.seen.acked {
			ch <- prometheus.MustNewConstMetric(sc.acked, prometheus.GaugeValue, 1, sc.group, row.node, typ, v)
			in := 0.0
			if v != "" && v == sc.c.s.currentVersion(row.key, typ) {
				in = 1
			}
			ch <- prometheus.MustNewConstMetric(sc.sync, prometheus.GaugeValue, in, sc.group, row.node, typ)
		}
		for typ, n := range row.seen.nacks {
			ch <- prometheus.MustNewConstMetric(sc.nacks, prometheus.CounterValue, float64(n), sc.group, row.node, typ)
		}
	}
}

func clone[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
