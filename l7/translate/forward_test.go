package translate_test

import (
	"net/netip"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestForwardListeners: a TCP listener with weighted Forward clusters
// gets tcp_proxy's weighted clusters (weight 0 left out); a UDP listener
// gets a UDP socket and the UDP proxy routing to its one cluster.
func TestForwardListeners(t *testing.T) {
	vip := netip.MustParseAddr("203.0.113.50")
	ep := []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.30:3000"), Weight: 1}}
	svc := model.Service{Name: "tcp.ns.r", Group: "g", Origin: "ns/r", Namespace: "ns", GatewayAPI: true,
		Upstreams: []model.Upstream{{Name: "a", Endpoints: ep}, {Name: "b", Endpoints: ep}, {Name: "c", Endpoints: ep}},
		Routes:    []model.Route{{Name: "forward", Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "a", Weight: 7}, {Upstream: "b", Weight: 3}}}}}
	cfg := model.Config{
		Gateways: []model.Gateway{{Name: "gw", Group: "g", Origin: "ns/gw", Listeners: []model.Listener{
			{Name: "tcp", VIP: vip, Port: 9300, Protocol: model.TCP, Forward: []model.WeightedCluster{
				{Cluster: "tcp.ns.r/a", Weight: 7}, {Cluster: "tcp.ns.r/b", Weight: 3}, {Cluster: "tcp.ns.r/c", Weight: 0}}},
			{Name: "udp", VIP: vip, Port: 5300, Protocol: model.UDP, Forward: []model.WeightedCluster{{Cluster: "tcp.ns.r/c", Weight: 1}}},
		}}},
		Services: []model.Service{svc},
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	byName := map[string]*listener.Listener{}
	for _, l := range translate.Listeners(r, "g") {
		byName[l.GetName()] = l
	}
	tl := byName[model.ListenerName(model.TCP, vip, 9300)]
	tp := &tcpproxy.TcpProxy{}
	if err := tl.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(tp); err != nil {
		t.Fatalf("tcp listener %v: %v", tl, err)
	}
	ws := tp.GetWeightedClusters().GetClusters()
	if len(ws) != 2 || ws[0].GetName() != "tcp.ns.r/a" || ws[0].GetWeight() != 7 || ws[1].GetName() != "tcp.ns.r/b" || ws[1].GetWeight() != 3 {
		t.Errorf("tcp_proxy clusters = %v; want a:7, b:3 (c of weight 0 left out)", ws)
	}

	ul := byName[model.ListenerName(model.UDP, vip, 5300)]
	if ul.GetAddress().GetSocketAddress().GetProtocol() != core.SocketAddress_UDP || ul.GetUdpListenerConfig() == nil || len(ul.GetFilterChains()) != 0 {
		t.Fatalf("udp listener = %v; want a UDP socket with no filter chains", ul)
	}
	up := &udpproxy.UdpProxyConfig{}
	if len(ul.GetListenerFilters()) != 1 || ul.GetListenerFilters()[0].GetTypedConfig().UnmarshalTo(up) != nil {
		t.Fatalf("udp listener filters = %v; want the UDP proxy", ul.GetListenerFilters())
	}
	rt := &udpproxy.Route{}
	if err := up.GetMatcher().GetOnNoMatch().GetAction().GetTypedConfig().UnmarshalTo(rt); err != nil || rt.GetCluster() != "tcp.ns.r/c" {
		t.Errorf("udp proxy routes to %q (%v); want tcp.ns.r/c", rt.GetCluster(), err)
	}
}
