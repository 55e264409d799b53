package console

import (
	"cmp"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// What the console reads of an l7 server about the gateways it feeds (its
// xDS streams, l7/xds streamCollector) and of an Envoy's own stats.
const (
	metricStreamServed = "tlb_l7_xds_stream_served_version_info"
	metricStreamAcked  = "tlb_l7_xds_stream_acked_version_info"
	metricStreamInSync = "tlb_l7_xds_stream_in_sync"
	metricStreamNACKs  = "tlb_l7_xds_stream_nacks_total"
	metricSnapshot     = "tlb_l7_snapshot_version_info"

	envoyConnected       = "envoy_control_plane_connected_state"
	envoyServerState     = "envoy_server_state"
	envoyListenersActive = "envoy_listener_manager_total_listeners_active"
	envoyListenersWarm   = "envoy_listener_manager_total_listeners_warming"
	envoyLDSRejected     = "envoy_listener_manager_lds_update_rejected"
	envoyCDSRejected     = "envoy_cluster_manager_cds_update_rejected"
	envoyLDSVersion      = "envoy_listener_manager_lds_version_text"
	envoyCDSVersion      = "envoy_cluster_manager_cds_version_text"
	envoyListenerActive  = "envoy_listener_downstream_cx_active"
)

// RoleEnvoy is an Envoy's read-only stats listener (l7 bootstrap
// --stats-address: GET /ready and /stats/prometheus).
const RoleEnvoy Role = "envoy"

// EnvoyNode is one gateway (an xDS node) an l7 server feeds: per xDS
// type, the version sent, the version it acknowledged, whether that is
// the current one and the NACKs on its stream.
type EnvoyNode struct {
	Node  string
	Group string
	Types []XDSType
}

// XDSType is one xDS type on a node's stream.
type XDSType struct {
	Type   string
	Served string
	Acked  string
	InSync bool
	NACKs  float64
}

// InSync reports whether the node acknowledged the current version of
// every type it was sent.
func (n EnvoyNode) InSync() bool {
	for _, t := range n.Types {
		if !t.InSync {
			return false
		}
	}
	return len(n.Types) > 0
}

// EnvoyStats is what an Envoy says of itself.
type EnvoyStats struct {
	// Connected: its xDS stream to l7 is up.
	Connected bool
	// State is the server state (live, draining, initializing).
	State string
	// ListenersActive and ListenersWarming count its listeners.
	ListenersActive, ListenersWarming float64
	// LDSVersion and CDSVersion are the versions it applied last.
	LDSVersion, CDSVersion string
	// Rejected counts the LDS and CDS updates it rejected since it started.
	Rejected float64
	// Compared is set when an l7 server's current versions were read:
	// LDSCurrent and CDSCurrent then say whether the versions the Envoy
	// applied are the ones l7 serves now.
	Compared, LDSCurrent, CDSCurrent bool
}

// current marks st's versions against those l7 serves now (by type URL).
func (st *EnvoyStats) current(served map[string]map[string]bool) {
	if len(served) == 0 {
		return
	}
	st.Compared = true
	st.LDSCurrent = served[typeListener][st.LDSVersion]
	st.CDSCurrent = served[typeCluster][st.CDSVersion]
}

// The xDS type URLs of the versions an Envoy reports.
const (
	typeListener = "type.googleapis.com/envoy.config.listener.v3.Listener"
	typeCluster  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
)

// servedVersions are the versions every l7 server serves now, by type.
func servedVersions(cs []Component) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, c := range cs {
		if c.Err != "" || c.NoData {
			continue
		}
		for _, sv := range c.Snapshots {
			if out[sv.Type] == nil {
				out[sv.Type] = map[string]bool{}
			}
			out[sv.Type][sv.Version] = true
		}
	}
	return out
}

// SnapshotVersion is the version an l7 server serves now for one key
// (kind/group) and type.
type SnapshotVersion struct {
	Key, Type, Version string
}

// applyStreams reads an l7 server's per-node stream series into c.Envoys.
func applyStreams(c *Component, fams map[string]*dto.MetricFamily) {
	nodes := map[string]map[string]*XDSType{}
	groups := map[string]string{}
	typeOf := func(m *dto.Metric) *XDSType {
		node, typ := label(m, "node"), label(m, "type")
		if nodes[node] == nil {
			nodes[node] = map[string]*XDSType{}
		}
		groups[node] = label(m, "group")
		if nodes[node][typ] == nil {
			nodes[node][typ] = &XDSType{Type: typ}
		}
		return nodes[node][typ]
	}
	for _, m := range fams[metricStreamServed].GetMetric() {
		typeOf(m).Served = label(m, "version")
	}
	for _, m := range fams[metricStreamAcked].GetMetric() {
		typeOf(m).Acked = label(m, "version")
	}
	for _, m := range fams[metricStreamInSync].GetMetric() {
		typeOf(m).InSync = value(m) == 1
	}
	for _, m := range fams[metricStreamNACKs].GetMetric() {
		typeOf(m).NACKs = value(m)
	}
	for _, m := range fams[metricSnapshot].GetMetric() {
		c.Snapshots = append(c.Snapshots, SnapshotVersion{Key: label(m, "key"), Type: label(m, "type"), Version: label(m, "version")})
	}
	for node, types := range nodes {
		n := EnvoyNode{Node: node, Group: groups[node]}
		for _, t := range types {
			n.Types = append(n.Types, *t)
		}
		slices.SortFunc(n.Types, func(a, b XDSType) int { return cmp.Compare(a.Type, b.Type) })
		c.Envoys = append(c.Envoys, n)
	}
	slices.SortFunc(c.Envoys, func(a, b EnvoyNode) int { return cmp.Compare(a.Node, b.Node) })
}

// applyEnvoy reads an Envoy's /stats/prometheus into c.
func applyEnvoy(c *Component, fams map[string]*dto.MetricFamily) {
	if c.Role != RoleEnvoy {
		return
	}
	st := &EnvoyStats{
		Connected:        sum(fams[envoyConnected]) == 1,
		ListenersActive:  sum(fams[envoyListenersActive]),
		ListenersWarming: sum(fams[envoyListenersWarm]),
		Rejected:         sum(fams[envoyLDSRejected]) + sum(fams[envoyCDSRejected]),
		LDSVersion:       label(first(fams[envoyLDSVersion]), "text_value"),
		CDSVersion:       label(first(fams[envoyCDSVersion]), "text_value"),
	}
	if f, ok := fams[envoyServerState]; ok {
		st.State = map[float64]string{0: "live", 1: "draining", 2: "pre-initializing", 3: "initializing"}[sum(f)]
	}
	c.EnvoyState = st
	for _, m := range fams[envoyListenerActive].GetMetric() {
		addr := label(m, "envoy_listener_address")
		if addr == "" {
			continue
		}
		c.Listeners = append(c.Listeners, Sample{Metric: "active connections", Labels: listenerAddress(addr), Value: value(m)})
	}
	slices.SortFunc(c.Listeners, func(a, b Sample) int { return cmp.Compare(a.Labels, b.Labels) })
}

// listenerAddress turns Envoy's stat name of a listener address
// ("203.0.113.10_443") back into host:port.
func listenerAddress(s string) string {
	if i := strings.LastIndexByte(s, '_'); i > 0 {
		return s[:i] + ":" + s[i+1:]
	}
	return s
}

func first(f *dto.MetricFamily) *dto.Metric {
	if ms := f.GetMetric(); len(ms) > 0 {
		return ms[0]
	}
	return nil
}
