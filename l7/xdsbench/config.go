package xdsbench

import (
	"fmt"
	"net/netip"

	"github.com/tlbproject/tlb/l7/model"
)

// Changed is how many endpoints change per round.
const Changed = 100

// EndpointsPerService is the endpoints of each service.
const EndpointsPerService = 5

// benchVIP is the bench gateway's VIP; every service is served on its port 80.
var benchVIP = netip.MustParseAddr("203.0.113.10")

// RouteConfig is the route configuration of the bench's one listener.
var RouteConfig = model.ListenerName(model.HTTP, benchVIP, 80)

// Config builds n services in group "edge" behind one HTTP gateway.
func Config(n int) model.Config {
	cfg := model.Config{Gateways: []model.Gateway{{Name: "bench", Group: "edge", Listeners: []model.Listener{
		{Name: "web", VIP: benchVIP, Port: 80, Protocol: model.HTTP},
	}}}}
	cfg.Services = make([]model.Service, n)
	for i := range n {
		eps := make([]model.Endpoint, EndpointsPerService)
		for j := range eps {
			eps[j] = model.Endpoint{Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}), uint16(8000+j)), Weight: 1}
		}
		cfg.Services[i] = model.Service{
			Name: fmt.Sprintf("svc-%05d", i), Group: "edge", Hosts: []string{fmt.Sprintf("svc-%05d.example.com", i)},
			Listeners: []model.ListenerRef{{Gateway: "bench", Listener: "web"}},
			Upstreams: []model.Upstream{{Name: "main", Endpoints: eps}},
			Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "main", Weight: 1}}}},
		}
	}
	return cfg
}

// MarkerPort is the port the changed endpoints get in round k.
func MarkerPort(k int) uint16 { return uint16(20000 + k) }

// Mutate changes one endpoint in each of Changed services for round k.
func Mutate(cfg *model.Config, k int) {
	n := len(cfg.Services)
	for j := range Changed {
		s := &cfg.Services[(k*Changed+j)%n]
		eps := append([]model.Endpoint(nil), s.Upstreams[0].Endpoints...)
		eps[0].Addr = netip.AddrPortFrom(eps[0].Addr.Addr(), MarkerPort(k))
		s.Upstreams = []model.Upstream{{Name: s.Upstreams[0].Name, Endpoints: eps}}
	}
}
