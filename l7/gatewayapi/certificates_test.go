package gatewayapi

import (
	"reflect"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// TestSeveralCertificatesBySNI: every certificateRef of a listener is
// served for the names it holds that no earlier one serves (issue 24:
// only the first was), chosen by SNI; the model accepts the result.
func TestSeveralCertificatesBySNI(t *testing.T) {
	for name, tc := range map[string]struct {
		hostname string
		secrets  map[string][]string // Secret -> DNS names, in certificateRefs order
		order    []string
		want     []model.SNICertificate
	}{
		"no hostname, certificates for different names": {
			secrets: map[string][]string{"a": {"a.example.com"}, "b": {"b.example.com", "c.example.com"}},
			order:   []string{"a", "b"},
			want: []model.SNICertificate{
				{ServerNames: []string{"a.example.com"}, Certificate: "cert.infra.a"},
				{ServerNames: []string{"b.example.com", "c.example.com"}, Certificate: "cert.infra.b"},
			},
		},
		"no hostname, overlapping names go to the first": {
			secrets: map[string][]string{"a": {"a.example.com", "b.example.com"}, "b": {"b.example.com", "c.example.com"}},
			order:   []string{"a", "b"},
			want: []model.SNICertificate{
				{ServerNames: []string{"a.example.com", "b.example.com"}, Certificate: "cert.infra.a"},
				{ServerNames: []string{"c.example.com"}, Certificate: "cert.infra.b"},
			},
		},
		"wildcard hostname, an exact name beside it": {
			hostname: "*.example.com",
			secrets:  map[string][]string{"wild": {"*.example.com"}, "a": {"a.example.com", "a.example.org"}},
			order:    []string{"wild", "a"},
			want: []model.SNICertificate{
				{ServerNames: []string{"*.example.com"}, Certificate: "cert.infra.wild"},
				{ServerNames: []string{"a.example.com"}, Certificate: "cert.infra.a"},
			},
		},
		"no hostname, a certificate without names is the default": {
			secrets: map[string][]string{"a": {"a.example.com"}, "any": nil},
			order:   []string{"a", "any"},
			want: []model.SNICertificate{
				{ServerNames: []string{"a.example.com"}, Certificate: "cert.infra.a"},
				{Certificate: "cert.infra.any"},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			in.Secrets = nil
			var refs []gatewayv1.SecretObjectReference
			for _, s := range tc.order {
				in.Secrets = append(in.Secrets, tlsSecret(t, "infra", s, tc.secrets[s]...))
				refs = append(refs, secretRef("", s))
			}
			in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{httpsListener("https", 443, tc.hostname, refs...)}
			res := Build(in)
			ls := res.Status.Gateways[gwKey].Listeners[0]
			wantCond(t, ls.Conditions, "Programmed", true, string(gatewayv1.ListenerReasonProgrammed))
			if msg := cond(t, ls.Conditions, "Accepted").Message; msg != "accepted" {
				t.Errorf("Accepted message %q; want every certificate served", msg)
			}
			if len(res.Config.Gateways) != 1 || len(res.Config.Gateways[0].Listeners) != 1 {
				t.Fatalf("model gateways %+v; want one listener", res.Config.Gateways)
			}
			for i := range tc.want { // the chains name their Gateway API listener
				tc.want[i].Listener, tc.want[i].Hostname = "https", tc.hostname
			}
			if got := res.Config.Gateways[0].Listeners[0].TLS; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("listener certificates %+v; want %+v", got, tc.want)
			}
			if len(res.Config.Certificates) != len(tc.order) {
				t.Errorf("%d certificates in the model; want %d", len(res.Config.Certificates), len(tc.order))
			}
			r := model.Resolve(res.Config, model.Options{})
			if len(r.Problems) > 0 || len(r.Listeners) != 1 || len(r.Listeners[0].TLS) != len(tc.want) {
				t.Errorf("the model refuses it or drops a certificate: problems %v, listeners %+v", r.Problems, r.Listeners)
			}
		})
	}
}
