package translate_test

import (
	"net/netip"
	"os"
	"testing"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// TestTLSTerminateChain: a TLS listener's entry with a certificate
// terminates TLS with it (SDS, sent as a secret) and forwards plain TCP
// with tcp_proxy, without ALPN; a passthrough entry on the same listener
// (Gateway API mode Mixed) still terminates nothing. A certificate the
// gateway does not declare is refused by the model.
func TestTLSTerminateChain(t *testing.T) {
	chain, err := os.ReadFile("../testdata/config/certs/shop.crt")
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile("../testdata/config/certs/shop.key")
	if err != nil {
		t.Fatal(err)
	}
	ep := []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.1:3000"), Weight: 1}}
	cfg := func(cert string) model.Config {
		return model.Config{
			Certificates: []model.Certificate{{Name: "term", Gateway: model.GatewayID{Name: "gw", Origin: "gw"}, Chain: chain, Key: model.NewPrivateKey(key)}},
			Gateways: []model.Gateway{{Name: "gw", Group: "g", Origin: "gw", Listeners: []model.Listener{{
				Name: "tls", VIP: netip.MustParseAddr("203.0.113.1"), Port: 8883, Protocol: model.TLS,
				Passthrough: []model.SNITarget{
					{ServerNames: []string{"tls.example.com"}, Targets: []model.WeightedCluster{{Cluster: "db/plain", Weight: 1}}, Certificate: cert},
					{ServerNames: []string{"abc.example.com"}, Targets: []model.WeightedCluster{{Cluster: "db/tls", Weight: 1}}},
				},
			}}}},
			Services: []model.Service{{Name: "db", Group: "g", Origin: "db", Hosts: []string{"tls.example.com"},
				Upstreams: []model.Upstream{{Name: "plain", Endpoints: ep}, {Name: "tls", Endpoints: ep}},
				Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "plain", Weight: 1}}}}}},
		}
	}
	if r := model.Resolve(cfg("missing"), model.Options{}); len(r.Config.Gateways) != 0 || len(r.Problems) == 0 || r.Problems[0].Field != "listeners[0].passthrough[0].certificate" {
		t.Fatalf("a certificate the gateway does not declare: gateways %d, problems %v; want the gateway refused naming the field", len(r.Config.Gateways), r.Problems)
	}
	r := resolve(t, cfg("term"), model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems %v", r.Problems)
	}
	set := translate.Group(r, "g", translate.Gateway)
	if err := validate.Set(set); err != nil {
		t.Fatalf("validate: %v", err)
	}
	var chains []*listener.FilterChain
	for _, res := range set[resource.ListenerType] {
		if l := res.(*listener.Listener); l.GetName() == "tls-203.0.113.1-8883" {
			chains = l.GetFilterChains()
		}
	}
	if len(chains) != 2 {
		t.Fatalf("%d filter chains; want 2", len(chains))
	}
	byName := map[string]*listener.FilterChain{}
	for _, fc := range chains {
		byName[fc.GetName()] = fc
	}
	term, pass := byName["tls.example.com"], byName["abc.example.com"]
	if term == nil || pass == nil {
		t.Fatalf("chains %v; want tls.example.com and abc.example.com", chains)
	}
	ctx := &tls.DownstreamTlsContext{}
	if err := term.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
		t.Fatalf("terminating chain's transport socket: %v", err)
	}
	sds := ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()
	if len(sds) != 1 || sds[0].GetName() != "term" || len(ctx.GetCommonTlsContext().GetAlpnProtocols()) != 0 {
		t.Errorf("terminating chain serves %v with ALPN %v; want certificate term and no ALPN", sds, ctx.GetCommonTlsContext().GetAlpnProtocols())
	}
	tp := &tcpproxy.TcpProxy{}
	if err := term.GetFilters()[0].GetTypedConfig().UnmarshalTo(tp); err != nil || tp.GetCluster() != "db/plain" {
		t.Errorf("terminating chain forwards to %v (%v); want tcp_proxy to db/plain", tp.GetClusterSpecifier(), err)
	}
	if pass.GetTransportSocket() != nil {
		t.Errorf("passthrough chain terminates TLS")
	}
	if s := set[resource.SecretType]; len(s) != 1 || s[0].(*tls.Secret).GetName() != "term" {
		t.Errorf("secrets %v; want term", s)
	}
}
