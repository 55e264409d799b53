package translate_test

import (
	"net/netip"
	"os"
	"slices"
	"testing"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestDefaultCertificateChain: a certificate without server names becomes
// a filter chain without a match, after the named ones, so Envoy serves
// it for every other name; the set stays valid.
func TestDefaultCertificateChain(t *testing.T) {
	chain, err := os.ReadFile("../testdata/config/certs/shop.crt")
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile("../testdata/config/certs/shop.key")
	if err != nil {
		t.Fatal(err)
	}
	cfg := model.Config{
		Certificates: []model.Certificate{
			{Name: "any", Chain: chain, Key: model.NewPrivateKey(key)},
			{Name: "named", Chain: chain, Key: model.NewPrivateKey(key)},
		},
		Gateways: []model.Gateway{{Name: "gw", Group: "g", Origin: "gw.yaml", Listeners: []model.Listener{{
			Name: "tls", VIP: netip.MustParseAddr("203.0.113.1"), Port: 443, Protocol: model.HTTPS,
			TLS: []model.SNICertificate{{Certificate: "any"}, {ServerNames: []string{"a.example.com"}, Certificate: "named"}},
		}}}},
		Services: []model.Service{{Name: "app", Group: "g", Origin: "app.yaml", Hosts: []string{"b.example.com"},
			Listeners: []model.ListenerRef{{Gateway: "gw", Listener: "tls"}},
			Upstreams: []model.Upstream{{Name: "u", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.1:80")}}}},
			Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}}}},
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems %v", r.Problems)
	}
	gatewaySet(t, r) // valid, and the cache builds the same
	set := translate.Group(r, "g", translate.Gateway)
	var chains []*listener.FilterChain
	for _, res := range set[resource.ListenerType] {
		if l := res.(*listener.Listener); l.GetName() == "https-203.0.113.1-443" {
			chains = l.GetFilterChains()
		}
	}
	if len(chains) != 2 {
		t.Fatalf("%d filter chains; want 2", len(chains))
	}
	if chains[0].GetName() != "named" || !slices.Equal(chains[0].GetFilterChainMatch().GetServerNames(), []string{"a.example.com"}) {
		t.Errorf("first chain %s matches %v; want named for a.example.com", chains[0].GetName(), chains[0].GetFilterChainMatch())
	}
	if chains[1].GetName() != "any" || chains[1].GetFilterChainMatch() != nil || chains[1].GetTransportSocket() == nil {
		t.Errorf("second chain %s matches %v; want any, with TLS and no match", chains[1].GetName(), chains[1].GetFilterChainMatch())
	}
	if n := len(set[resource.SecretType]); n != 2 {
		t.Errorf("%d secrets; want both certificates", n)
	}
}
