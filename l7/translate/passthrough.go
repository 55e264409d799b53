package translate

import (
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// passthroughChains are the filter chains of a TLS listener: one per
// passthrough entry, chosen by the client's SNI (server_names, read by
// the tls_inspector listener filter), forwarding the still encrypted
// connection with tcp_proxy to the entry's clusters, weighted per
// connection. The entry without names matches every other connection.
// An entry with a certificate terminates TLS first (tlsterminate.go).
// Only the clusters the model accepted for the listener's group appear.
func passthroughChains(el model.EnvoyListener) []*listener.FilterChain {
	out := make([]*listener.FilterChain, 0, len(el.Passthrough))
	for _, p := range el.Passthrough {
		name := "*"
		var match *listener.FilterChainMatch
		if len(p.ServerNames) > 0 {
			name = p.ServerNames[0]
			match = &listener.FilterChainMatch{ServerNames: p.ServerNames}
		}
		fc := &listener.FilterChain{
			Name:             name,
			FilterChainMatch: match,
			Filters:          []*listener.Filter{tcpProxy(statPrefix(el.Name), p.Targets)},
		}
		if p.Certificate != "" {
			fc.TransportSocket = terminateTLS(p.Certificate, el)
		}
		out = append(out, fc)
	}
	return out
}

// liveClusters are the clusters that get connections: a lone one, or
// those of positive weight (the model refuses an entry where all weigh 0).
func liveClusters(ts []model.WeightedCluster) []model.WeightedCluster {
	if len(ts) == 1 {
		return ts
	}
	var out []model.WeightedCluster
	for _, t := range ts {
		if t.Weight > 0 {
			out = append(out, t)
		}
	}
	return out
}
