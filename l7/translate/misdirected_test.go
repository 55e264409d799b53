package translate_test

import (
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// misdirectedModel is the Gateway of the conformance test
// HTTPRouteHTTPSListenerDetectMisdirectedRequests as gatewayapi models
// it: four HTTPS listeners on port 443 (none, an exact, a wildcard and an
// exact hostname under that wildcard), one certificate, one route each.
func misdirectedModel(t *testing.T) model.Resolved {
	t.Helper()
	chain, err := os.ReadFile("../testdata/config/certs/shop.crt")
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile("../testdata/config/certs/shop.key")
	if err != nil {
		t.Fatal(err)
	}
	gw := model.GatewayID{Name: "gw", Origin: "gw.yaml"}
	svc := func(name, host, addr string) model.Service {
		return model.Service{Name: name, Group: "g", Origin: model.Origin(name + ".yaml"), Hosts: []string{host}, GatewayAPI: true,
			Listeners: []model.ListenerRef{{Gateway: "gw", Listener: "https"}},
			Upstreams: []model.Upstream{{Name: "u", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort(addr)}}}},
			Routes:    []model.Route{{Prefix: "/detect-misdirected-requests", Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}}}
	}
	cfg := model.Config{
		Certificates: []model.Certificate{{Name: "cert", Gateway: gw, Chain: chain, Key: model.NewPrivateKey(key)}},
		Gateways: []model.Gateway{{Name: "gw", Group: "g", Origin: "gw.yaml", Listeners: []model.Listener{{
			Name: "https", VIP: netip.MustParseAddr("203.0.113.60"), Port: 443, Protocol: model.HTTPS,
			TLS: []model.SNICertificate{
				{ServerNames: []string{"*.org"}, Certificate: "cert", Listener: "https"},
				{ServerNames: []string{"second-example.org"}, Certificate: "cert", Listener: "https-with-hostname", Hostname: "second-example.org"},
				{ServerNames: []string{"*.wildcard.org"}, Certificate: "cert", Listener: "https-with-wildcard-hostname", Hostname: "*.wildcard.org"},
				{ServerNames: []string{"fourth-example.wildcard.org"}, Certificate: "cert", Listener: "https-with-hostname-matching-wildcard", Hostname: "fourth-example.wildcard.org"},
			},
		}}}},
		Services: []model.Service{
			svc("r1", "example.org", "198.51.100.1:80"),
			svc("r2", "second-example.org", "198.51.100.2:80"),
			svc("r3", "*.wildcard.org", "198.51.100.3:80"),
			svc("r4", "fourth-example.wildcard.org", "198.51.100.4:80"),
		},
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems %v", r.Problems)
	}
	return r
}

// TestMisdirectedRequests: the cases of the conformance test
// HTTPRouteHTTPSListenerDetectMisdirectedRequests, answered as Envoy
// would from the translation: the chain the SNI picks, its route table,
// the virtual host of the Host. A Host another listener of the port
// serves is 421; one no listener serves is 404 on the listener without
// hostname and 421 on one with a hostname. Without a route table per
// chain every chain answers every listener's hosts.
func TestMisdirectedRequests(t *testing.T) {
	gatewaySet(t, misdirectedModel(t)) // valid, and the cache builds the same
	set := translate.Group(misdirectedModel(t), "g", translate.Gateway)
	var chains []*listener.FilterChain
	for _, res := range set[resource.ListenerType] {
		chains = append(chains, res.(*listener.Listener).GetFilterChains()...)
	}
	tables := map[string]*route.RouteConfiguration{}
	for _, res := range set[resource.RouteType] {
		tables[res.(*route.RouteConfiguration).GetName()] = res.(*route.RouteConfiguration)
	}
	for _, tc := range []struct{ sni, host, want string }{
		{"example.org", "example.org", "r1"},
		{"example.org", "second-example.org", "421"},
		{"example.org", "unknown-example.org", "404"},
		{"second-example.org", "second-example.org", "r2"},
		{"second-example.org", "example.org", "421"},
		{"second-example.org", "unknown-example.org", "421"},
		{"third-example.wildcard.org", "third-example.wildcard.org", "r3"},
		{"third-example.wildcard.org", "fith-example.wildcard.org", "r3"},
		{"third-example.wildcard.org", "fourth-example.wildcard.org", "421"},
		{"third-example.wildcard.org", "second-example.org", "421"},
		{"third-example.wildcard.org", "unknown-example.org", "421"},
		{"fourth-example.wildcard.org", "fourth-example.wildcard.org", "r4"},
		{"fourth-example.wildcard.org", "fith-example.wildcard.org", "421"},
		{"unknown-example.org", "example.org", "r1"},
		{"unknown-example.org", "unknown-example.org", "404"},
	} {
		c := chainFor(chains, tc.sni)
		if c == nil {
			t.Errorf("SNI %s: no filter chain", tc.sni)
			continue
		}
		rc := tables[rdsName(t, c)]
		if rc == nil {
			t.Fatalf("SNI %s: chain reads route table %q, which is not in the set", tc.sni, rdsName(t, c))
		}
		if got := answer(rc, tc.host, "/detect-misdirected-requests"); got != tc.want {
			t.Errorf("SNI %s, Host %s: %s (route table %s); want %s", tc.sni, tc.host, got, rc.GetName(), tc.want)
		}
	}
}

// TestOneListenerOneRouteTable: chains of one Gateway API listener (or of
// the DSL) keep the listener's route table; none is added.
func TestOneListenerOneRouteTable(t *testing.T) {
	r := misdirectedModel(t)
	for i := range r.Listeners {
		for j := range r.Listeners[i].TLS {
			r.Listeners[i].TLS[j].Listener = "https"
		}
	}
	set := translate.Group(r, "g", translate.Gateway)
	if n := len(set[resource.RouteType]); n != 1 {
		t.Errorf("%d route tables; want the listener's alone", n)
	}
	for _, res := range set[resource.ListenerType] {
		for _, c := range res.(*listener.Listener).GetFilterChains() {
			if name := rdsName(t, c); name != "https-203.0.113.60-443" {
				t.Errorf("chain %s reads %s; want the listener's table", c.GetName(), name)
			}
		}
	}
}

// chainFor is the filter chain Envoy picks for sni: an exact server name,
// else the longest matching wildcard, else the chain without names.
func chainFor(chains []*listener.FilterChain, sni string) *listener.FilterChain {
	var best, fallback *listener.FilterChain
	bestLen := -1
	for _, c := range chains {
		names := c.GetFilterChainMatch().GetServerNames()
		if len(names) == 0 {
			fallback = c
		}
		for _, n := range names {
			switch {
			case n == sni:
				return c
			case strings.HasPrefix(n, "*.") && strings.HasSuffix(sni, n[1:]) && len(n) > bestLen:
				best, bestLen = c, len(n)
			}
		}
	}
	if best != nil {
		return best
	}
	return fallback
}

// rdsName is the route table the chain's HTTP connection manager reads.
func rdsName(t *testing.T, c *listener.FilterChain) string {
	t.Helper()
	var m hcm.HttpConnectionManager
	if err := c.GetFilters()[0].GetTypedConfig().UnmarshalTo(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetRds().GetRouteConfigName()
}

// answer is what rc answers to a request for host and path, as Envoy
// picks the virtual host (exact domain, longest suffix wildcard, "*") and
// the first route whose prefix matches: the status of a direct response,
// "404" for no virtual host or route, else the service of the cluster.
func answer(rc *route.RouteConfiguration, host, path string) string {
	var vh *route.VirtualHost
	best := -1
	for _, v := range rc.GetVirtualHosts() {
		for _, d := range v.GetDomains() {
			switch {
			case d == host:
				best, vh = len(host)+1, v
			case d == "*" && best < 0:
				best, vh = 0, v
			case strings.HasPrefix(d, "*.") && strings.HasSuffix(host, d[1:]) && len(d) > best:
				best, vh = len(d), v
			}
		}
	}
	for _, r := range vh.GetRoutes() {
		if !strings.HasPrefix(path, r.GetMatch().GetPrefix()) {
			continue
		}
		if dr := r.GetDirectResponse(); dr != nil {
			return strconv.Itoa(int(dr.GetStatus()))
		}
		cluster := r.GetRoute().GetCluster()
		if wc := r.GetRoute().GetWeightedClusters().GetClusters(); len(wc) > 0 {
			cluster = wc[0].GetName()
		}
		svc, _, _ := strings.Cut(cluster, "/")
		return svc
	}
	return "404"
}
