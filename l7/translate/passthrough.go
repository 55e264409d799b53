package translate

import (
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"

	"github.com/tlbproject/tlb/l7/model"
)

// passthroughChains are the filter chains of a TLS listener: one per
// passthrough entry, chosen by the client's SNI (server_names, read by
// the tls_inspector listener filter), forwarding the still encrypted
// connection with tcp_proxy to the entry's clusters, weighted per
// connection. The entry without names matches every other connection.
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
		tp := &tcpproxy.TcpProxy{StatPrefix: statPrefix(el.Name), IdleTimeout: dur(tcpIdleTimeout)}
		live := liveClusters(p.Targets)
		if len(live) == 1 {
			tp.ClusterSpecifier = &tcpproxy.TcpProxy_Cluster{Cluster: live[0].Cluster}
		} else {
			wc := &tcpproxy.TcpProxy_WeightedCluster{}
			for _, t := range live {
				wc.Clusters = append(wc.Clusters, &tcpproxy.TcpProxy_WeightedCluster_ClusterWeight{Name: t.Cluster, Weight: t.Weight})
			}
			tp.ClusterSpecifier = &tcpproxy.TcpProxy_WeightedClusters{WeightedClusters: wc}
		}
		out = append(out, &listener.FilterChain{
			Name:             name,
			FilterChainMatch: match,
			Filters: []*listener.Filter{{
				Name:       wellknown.TCPProxy,
				ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(tp)},
			}},
		})
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
