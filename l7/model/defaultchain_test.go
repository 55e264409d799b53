package model_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

// TestDefaultCertificateChain: an HTTPS listener may serve one certificate
// without server names, for every name no other certificate matches; it
// covers every host of the services there and sorts after the named ones.
// A second one is refused.
func TestDefaultCertificateChain(t *testing.T) {
	certs := []model.Certificate{
		{Name: "named", Gateway: model.GatewayID{Name: "pub", Origin: "pub.yaml"}, Chain: []byte("x"), Key: model.NewPrivateKey([]byte("k"))},
		{Name: "any", Gateway: model.GatewayID{Name: "pub", Origin: "pub.yaml"}, Chain: []byte("x"), Key: model.NewPrivateKey([]byte("k"))},
	}
	gateway := func(tls ...model.SNICertificate) model.Gateway {
		g := gw("pub", "203.0.113.1", 443, model.HTTPS)
		g.Listeners[0].TLS = tls
		return g
	}
	s := svc("b", "b.example.com", "/")
	s.Listeners = []model.ListenerRef{{Gateway: "pub", Listener: "l"}}

	r := model.Resolve(model.Config{Certificates: certs, Services: []model.Service{s}, Gateways: []model.Gateway{gateway(
		model.SNICertificate{Certificate: "any"},
		model.SNICertificate{ServerNames: []string{"a.example.com"}, Certificate: "named"},
	)}}, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems %v; want none", r.Problems)
	}
	if len(r.Listeners) != 1 {
		t.Fatalf("listeners %+v; want one", r.Listeners)
	}
	el := r.Listeners[0]
	if got := names(el.TLS, func(c model.SNICertificate) string { return c.Certificate + "=" + strings.Join(c.ServerNames, "+") }); got != "named=a.example.com,any=" {
		t.Errorf("certificates %s; want named=a.example.com,any= (the default chain last)", got)
	}
	if len(el.Services) != 1 || el.Services[0] != "b" {
		t.Errorf("services %v; want b, served by the default chain", el.Services)
	}

	two := gateway(model.SNICertificate{Certificate: "any"}, model.SNICertificate{Certificate: "named"})
	two.Listeners[0].VIP = netip.MustParseAddr("203.0.113.2")
	r = model.Resolve(model.Config{Certificates: certs, Gateways: []model.Gateway{two}}, model.Options{})
	if len(r.Listeners) != 0 {
		t.Errorf("listeners %+v; want the gateway with two default chains rejected", r.Listeners)
	}
	found := false
	for _, p := range r.Problems {
		if p.Rejected && p.Field == "listeners[0].certificates[1].sni" && strings.Contains(p.Msg, "only one certificate") {
			found = true
		}
	}
	if !found {
		t.Errorf("problems %v; want listeners[0].certificates[1].sni refused", r.Problems)
	}
}
