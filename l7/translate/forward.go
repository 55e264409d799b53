package translate

import (
	"time"

	xdscore "github.com/cncf/xds/go/xds/core/v3"
	matcher "github.com/cncf/xds/go/xds/type/matcher/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"

	"github.com/tlbproject/tlb/l7/model"
)

// udpProxyFilter is the listener filter of Envoy's UDP proxy.
const udpProxyFilter = "envoy.filters.udp_listener.udp_proxy"

// udpIdleTimeout ends a UDP session (client address and port -> one
// upstream endpoint) after this long without a datagram.
const udpIdleTimeout = time.Minute

// tcpProxy is the tcp_proxy filter of a listener forwarding every
// connection to the live clusters of ts, weighted per connection.
func tcpProxy(statPrefix string, ts []model.WeightedCluster) *listener.Filter {
	tp := &tcpproxy.TcpProxy{StatPrefix: statPrefix, IdleTimeout: dur(tcpIdleTimeout)}
	live := liveClusters(ts)
	if len(live) == 1 {
		tp.ClusterSpecifier = &tcpproxy.TcpProxy_Cluster{Cluster: live[0].Cluster}
	} else {
		wc := &tcpproxy.TcpProxy_WeightedCluster{}
		for _, t := range live {
			wc.Clusters = append(wc.Clusters, &tcpproxy.TcpProxy_WeightedCluster_ClusterWeight{Name: t.Cluster, Weight: t.Weight})
		}
		tp.ClusterSpecifier = &tcpproxy.TcpProxy_WeightedClusters{WeightedClusters: wc}
	}
	return &listener.Filter{Name: wellknown.TCPProxy, ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(tp)}}
}

// udpListener makes l a UDP listener whose datagrams Envoy's UDP proxy
// forwards to the listener's one cluster (the model's check: weights
// between backends are its endpoints' weights), a session per client
// address and port.
func udpListener(l *listener.Listener, el model.EnvoyListener) {
	l.Address.GetSocketAddress().Protocol = core.SocketAddress_UDP
	l.UdpListenerConfig = &listener.UdpListenerConfig{}
	// A UDP listener has no connections whose buffers to bound.
	l.PerConnectionBufferLimitBytes = nil
	cluster := ""
	if len(el.Forward) > 0 {
		cluster = el.Forward[0].Cluster
	}
	up := &udpproxy.UdpProxyConfig{
		StatPrefix:  statPrefix(el.Name),
		IdleTimeout: dur(udpIdleTimeout),
		RouteSpecifier: &udpproxy.UdpProxyConfig_Matcher{Matcher: &matcher.Matcher{
			OnNoMatch: &matcher.Matcher_OnMatch{OnMatch: &matcher.Matcher_OnMatch_Action{Action: &xdscore.TypedExtensionConfig{
				Name: "route", TypedConfig: mustAny(&udpproxy.Route{Cluster: cluster}),
			}}},
		}},
	}
	l.ListenerFilters = []*listener.ListenerFilter{{
		Name:       udpProxyFilter,
		ConfigType: &listener.ListenerFilter_TypedConfig{TypedConfig: mustAny(up)},
	}}
}
