package gatewayapi

import (
	"slices"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// TestMisdirectedChains: the Gateway of the conformance test
// HTTPRouteHTTPSListenerDetectMisdirectedRequests (four HTTPS listeners
// on one port, one certificate for "*.org" and "*.wildcard.org", as the suite makes it)
// gives one chain per listener, each naming its listener and hostname; a
// name of the listener without hostname's certificate that another
// listener has as hostname goes to that listener ("*.wildcard.org", once
// taken by the first listener, left the wildcard listener no chain).
func TestMisdirectedChains(t *testing.T) {
	in := world(t)
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "multi", "*.org", "*.wildcard.org"))
	ref := secretRef("", "multi")
	in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{
		httpsListener("https", 443, "", ref),
		httpsListener("https-with-hostname", 443, "second-example.org", ref),
		httpsListener("https-with-wildcard-hostname", 443, "*.wildcard.org", ref),
		httpsListener("https-with-hostname-matching-wildcard", 443, "fourth-example.wildcard.org", ref),
	}
	res := Build(in)
	if len(res.Config.Gateways) != 1 || len(res.Config.Gateways[0].Listeners) != 1 {
		t.Fatalf("model gateways %+v; want one listener", res.Config.Gateways)
	}
	got := res.Config.Gateways[0].Listeners[0].TLS
	want := []model.SNICertificate{
		{ServerNames: []string{"*.org"}, Certificate: "cert.infra.multi", Listener: "https"},
		{ServerNames: []string{"second-example.org"}, Certificate: "cert.infra.multi", Listener: "https-with-hostname", Hostname: "second-example.org"},
		{ServerNames: []string{"*.wildcard.org"}, Certificate: "cert.infra.multi", Listener: "https-with-wildcard-hostname", Hostname: "*.wildcard.org"},
		{ServerNames: []string{"fourth-example.wildcard.org"}, Certificate: "cert.infra.multi", Listener: "https-with-hostname-matching-wildcard", Hostname: "fourth-example.wildcard.org"},
	}
	if !slices.EqualFunc(got, want, func(a, b model.SNICertificate) bool {
		return slices.Equal(a.ServerNames, b.ServerNames) && a.Certificate == b.Certificate && a.Listener == b.Listener && a.Hostname == b.Hostname
	}) {
		t.Errorf("chains\n%+v\nwant\n%+v", got, want)
	}
	r := model.Resolve(res.Config, model.Options{})
	if len(r.Problems) > 0 {
		t.Errorf("the model refuses it: %v", r.Problems)
	}
}

// TestMisdirectedChainsOfAListenerSet: a ListenerSet's listener named
// like one of its Gateway's own gets a chain naming its set, so the two
// listeners are told apart (each its own route table, 421 between them).
func TestMisdirectedChainsOfAListenerSet(t *testing.T) {
	in := world(t)
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "multi", "*.org"))
	ref := secretRef("", "multi")
	in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{httpsListener("https", 443, "", ref)}
	in.Gateways[0].Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr(gatewayv1.NamespacesFromSame)}}
	in.ListenerSets = []*gatewayv1.ListenerSet{{ObjectMeta: meta("infra", "set"), Spec: gatewayv1.ListenerSetSpec{
		ParentRef: gatewayv1.ParentGatewayReference{Name: "gw"},
		Listeners: []gatewayv1.ListenerEntry{{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			Hostname: ptr(gatewayv1.Hostname("second-example.org")),
			TLS:      &gatewayv1.ListenerTLSConfig{Mode: ptr(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{ref}}}},
	}}}
	res := Build(in)
	if len(res.Config.Gateways) != 1 || len(res.Config.Gateways[0].Listeners) != 1 {
		t.Fatalf("model gateways %+v; want one listener", res.Config.Gateways)
	}
	var got []string
	for _, c := range res.Config.Gateways[0].Listeners[0].TLS {
		got = append(got, c.Listener+"="+c.Hostname)
	}
	if want := []string{"https=", "infra/set/https=second-example.org"}; !slices.Equal(got, want) {
		t.Errorf("chains of listeners %v; want %v", got, want)
	}
}
