package gatewayapi

import (
	"reflect"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// TLSRouteTerminateSimpleSameNamespace and
// TLSRouteMixedTerminationSameNamespace: a TLS listener of mode
// Terminate serves its certificate for the route's names and forwards
// plain TCP; one of mode Passthrough on the same port keeps forwarding
// its names encrypted. Terminate used to be refused (UnsupportedValue).
func TestTLSRouteTerminateAndMixed(t *testing.T) {
	in := world(t)
	term := allNamespaces(tlsListener("tls", 8443, "tls.example.com"))
	term.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{secretRef("", "wild")}}
	pass := allNamespaces(tlsListener("pass", 8443, "abc.example.com"))
	in.Gateways[0].Spec.Listeners = append(in.Gateways[0].Spec.Listeners[:2], term, pass)
	in.TLSRoutes = append(in.TLSRoutes,
		testTLSRoute("t", []gatewayv1.Hostname{"tls.example.com"}, backendRef("", "web", 8080, nil)),
		func() *gatewayv1.TLSRoute {
			r := testTLSRoute("p", []gatewayv1.Hostname{"abc.example.com"}, backendRef("", "web", 8080, nil))
			r.Spec.ParentRefs[0].SectionName = ptr(gatewayv1.SectionName("pass"))
			return r
		}(),
	)
	res := Build(in)
	st := res.Status.Gateways[nn("infra", "gw")]
	for _, ls := range st.Listeners[2:] {
		wantCond(t, ls.Conditions, "Accepted", true, "Accepted")
		wantCond(t, ls.Conditions, "Programmed", true, "Programmed")
		if ls.AttachedRoutes != 1 || len(ls.SupportedKinds) != 1 || ls.SupportedKinds[0].Kind != kindTLSRoute {
			t.Fatalf("listener %s: %d routes, kinds %s; want 1 and TLSRoute", ls.Name, ls.AttachedRoutes, jsonOf(ls.SupportedKinds))
		}
	}
	for _, r := range []string{"t", "p"} {
		wantCond(t, res.Status.TLSRoutes[nn("app", r)].Parents[0].Conditions, "Accepted", true, "Accepted")
	}
	var tls model.Listener
	for _, l := range res.Config.Gateways[0].Listeners {
		if l.Name == "tls-8443" {
			tls = l
		}
	}
	want := []model.SNITarget{
		{ServerNames: []string{"tls.example.com"}, Targets: []model.WeightedCluster{{Cluster: "tr.app.t/app.web.8080", Weight: 1}}, Certificate: "cert.infra.wild"},
		{ServerNames: []string{"abc.example.com"}, Targets: []model.WeightedCluster{{Cluster: "tr.app.p/app.web.8080", Weight: 1}}},
	}
	if !reflect.DeepEqual(tls.Passthrough, want) || len(tls.TLS) != 0 {
		t.Fatalf("tls-8443: entries %s, chains %s; want %s and no HTTPS chain", jsonOf(tls.Passthrough), jsonOf(tls.TLS), jsonOf(want))
	}
	r := model.Resolve(res.Config, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %s", jsonOf(r.Problems))
	}
	served := false
	for _, c := range r.Config.Certificates {
		served = served || c.Name == "cert.infra.wild"
	}
	if !served {
		t.Fatalf("certificate cert.infra.wild not served: %v", len(r.Config.Certificates))
	}
}

// A terminating listener serves each name with the certificate that
// covers it, the first one when none does.
func TestTLSTerminateCertificatePerName(t *testing.T) {
	in := world(t)
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "db", "db.example.org"))
	l := allNamespaces(tlsListener("tls", 8443, ""))
	l.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{secretRef("", "wild"), secretRef("", "db")}}
	in.Gateways[0].Spec.Listeners[2] = l
	in.TLSRoutes = append(in.TLSRoutes, testTLSRoute("t", []gatewayv1.Hostname{"a.example.com", "db.example.org", "other.test"}, backendRef("", "web", 8080, nil)))
	res := Build(in)
	var got map[string]string
	for _, ml := range res.Config.Gateways[0].Listeners {
		if ml.Name == "tls-8443" {
			got = map[string]string{}
			for _, p := range ml.Passthrough {
				for _, n := range p.ServerNames {
					got[n] = p.Certificate
				}
			}
		}
	}
	want := map[string]string{"a.example.com": "cert.infra.wild", "db.example.org": "cert.infra.db", "other.test": "cert.infra.wild"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("certificate by name %v; want %v", got, want)
	}
	if ps := model.Resolve(res.Config, model.Options{}).Problems; len(ps) > 0 {
		t.Fatalf("problems: %s", jsonOf(ps))
	}
	// other.test is served with the first certificate, which does not
	// name it: the route says so, as for an HTTPS listener.
	c := cond(t, res.Status.TLSRoutes[nn("app", "t")].Parents[0].Conditions, "Accepted")
	if c.Status != "True" || !strings.Contains(c.Message, "other.test (listener tls)") || strings.Contains(c.Message, "a.example.com") {
		t.Fatalf("Accepted %s %q; want True naming other.test as outside the certificate", c.Status, c.Message)
	}
}
