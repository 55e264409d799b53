package translate_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// encoded returns every listener and route configuration of a group's
// gateway set by name, deterministically encoded.
func encoded(t *testing.T, r model.Resolved, group string) map[string][]byte {
	t.Helper()
	set := translate.Group(r, group, translate.Gateway)
	out := map[string][]byte{}
	for _, typ := range []string{resource.ListenerType, resource.RouteType} {
		for _, res := range set[typ] {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			out[typ+"/"+cachev3.GetResourceName(res)] = b
		}
	}
	return out
}

// TestUnrelatedChangesLeaveListenersAlone: adding a gateway whose ports
// are the ones the old port map would have used (8080, 8443), a service on
// it, and removing another gateway's listener changes no byte of any
// other listener or route configuration, and no listener changes port.
func TestUnrelatedChangesLeaveListenersAlone(t *testing.T) {
	base := loadExample(t)
	before := encoded(t, base, "edge")

	cfg := base.Config
	cfg.Gateways = append(slices.Clone(cfg.Gateways), model.Gateway{Name: "late", Group: "edge", Origin: "late.yaml", Listeners: []model.Listener{
		{Name: "alt", VIP: netip.MustParseAddr("203.0.113.20"), Port: 8080, Protocol: model.HTTP},
		{Name: "alt-tls", VIP: netip.MustParseAddr("203.0.113.20"), Port: 8443, Protocol: model.TCP, Target: "payments/db"},
	}})
	cfg.Services = append(slices.Clone(cfg.Services), model.Service{Name: "late", Group: "edge", Origin: "late-svc.yaml", Hosts: []string{"late.example.com"},
		Listeners: []model.ListenerRef{{Gateway: "late", Listener: "alt"}},
		Upstreams: []model.Upstream{{Name: "u", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.99:80"), Weight: 1}}}},
		Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}}})
	added := resolve(t, cfg, model.Options{})
	if len(added.Problems) > 0 {
		t.Fatalf("problems: %v", added.Problems)
	}
	after := encoded(t, added, "edge")
	for name, b := range before {
		if !slices.Equal(after[name], b) {
			t.Errorf("%s changed when an unrelated gateway and service were added", name)
		}
	}
	if len(after) != len(before)+3 { // two listeners, one route configuration
		t.Errorf("want 3 new resources, got %d -> %d", len(before), len(after))
	}

	// Remove the public gateway's "api" listener: the others stay as they were.
	cfg = base.Config
	cfg.Gateways = slices.Clone(cfg.Gateways)
	for i, g := range cfg.Gateways {
		if g.Name == "public" {
			g.Listeners = slices.DeleteFunc(slices.Clone(g.Listeners), func(l model.Listener) bool { return l.Name == "api" })
			cfg.Gateways[i] = g
		}
	}
	removed := resolve(t, cfg, model.Options{})
	less := encoded(t, removed, "edge")
	for name, b := range less {
		if !slices.Equal(before[name], b) {
			t.Errorf("%s changed when another listener was removed", name)
		}
	}
	if _, ok := less[resource.ListenerType+"/http-203.0.113.12-80"]; ok || len(less) != len(before)-2 {
		t.Errorf("the removed listener and its routes must go, and only they: %d -> %d", len(before), len(less))
	}
}

// TestHostsOnlyOnTheirListeners: each host appears in the route
// configuration of the listeners its service names, and in no other; each
// listener binds its own VIP and port with freebind.
func TestHostsOnlyOnTheirListeners(t *testing.T) {
	r := loadExample(t)
	set := translate.Group(r, "edge", translate.Gateway)
	hosts := map[string][]string{} // route configuration -> hosts
	for _, res := range set[resource.RouteType] {
		rc := res.(*route.RouteConfiguration)
		for _, vh := range rc.GetVirtualHosts() {
			hosts[rc.GetName()] = append(hosts[rc.GetName()], vh.GetDomains()...)
		}
	}
	want := map[string]string{
		"http-203.0.113.10-80":   "*",                                     // the redirect to HTTPS, nothing else
		"https-203.0.113.10-443": "*.shop.example.com,shop.example.com",   // shop only
		"http-203.0.113.12-80":   "*,pay.example.com,reports.example.com", // payments, todolist and reports
	}
	for name, w := range want {
		got := slices.Sorted(slices.Values(hosts[name]))
		if strings.Join(got, ",") != w {
			t.Errorf("%s serves %v, want %s", name, got, w)
		}
	}
	if len(hosts) != len(want) {
		t.Errorf("route configurations: %v", hosts)
	}
	for _, res := range set[resource.ListenerType] {
		l := res.(*listener.Listener)
		sa := l.GetAddress().GetSocketAddress()
		if !l.GetFreebind().GetValue() || !strings.Contains(l.GetName(), "-"+sa.GetAddress()+"-") || sa.GetAddress() == "0.0.0.0" {
			t.Errorf("listener %s binds %s:%d freebind=%v; want its own VIP with freebind", l.GetName(), sa.GetAddress(), sa.GetPortValue(), l.GetFreebind())
		}
	}
}
