package kube

import (
	"slices"
	"strings"
	"testing"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestTLSPolicyAnnotation: tlb.io/l7-tls sets the HTTPS listener's policy;
// without it the listener has none (the translator's defaults); bad JSON,
// unknown keys, refused versions or suites, and the annotation without a
// TLS Secret are problems naming it, and the Service is not served.
func TestTLSPolicyAnnotation(t *testing.T) {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "t"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: []byte(testChain), corev1.TLSPrivateKeyKey: []byte(testKey)}}
	secrets := map[string]*corev1.Secret{"web/t": sec}
	ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7Hosts: "a.example.com", api.AnnotationL7TLSSecret: "t"}
	build := func(ann map[string]string) (Built, []Problem) {
		b, _, ps := BuildService(service("web", "shop", ann, "203.0.113.10", port("https", 443)), nil, secrets, testNow)
		return b, ps
	}
	b, ps := build(ann)
	if len(ps) > 0 || b.Gateway == nil || b.Gateway.Listeners[0].TLSPolicy != nil {
		t.Fatalf("without the annotation: problems %v, gateway %+v; want an HTTPS listener with no policy", ps, b.Gateway)
	}
	ann[api.AnnotationL7TLSPolicy] = `{"minVersion":"1.2","cipherSuites":["ECDHE-ECDSA-AES128-GCM-SHA256"]}`
	b, ps = build(ann)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if p := b.Gateway.Listeners[0].TLSPolicy; p == nil || p.MinVersion != "1.2" || !slices.Equal(p.CipherSuites, []string{"ECDHE-ECDSA-AES128-GCM-SHA256"}) {
		t.Fatalf("policy = %+v", p)
	}
	for v, want := range map[string]string{
		`{"minVersion":"1.1"}`:                  "tls.minVersion: TLS 1.1 is refused",
		`{"minVersion":true}`:                   "want a TLS version such as",
		`{"cipherSuites":["AES128-SHA"]}`:       "tls.cipherSuites[0]",
		`{"minVersion":"1.3","maxVersion":"x"}`: "unknown field",
		`nope`:                                  "want JSON",
	} {
		ann[api.AnnotationL7TLSPolicy] = v
		_, ps := build(ann)
		if len(ps) != 1 || ps[0].Annotation != api.AnnotationL7TLSPolicy || !strings.Contains(ps[0].Error(), "web/shop") || !strings.Contains(ps[0].Msg, want) {
			t.Errorf("%s: problems %v, want one on %s saying %q", v, ps, api.AnnotationL7TLSPolicy, want)
		}
	}
	delete(ann, api.AnnotationL7TLSSecret)
	ann[api.AnnotationL7TLSPolicy] = `{"minVersion":"1.3"}`
	if _, ps := build(ann); len(ps) != 1 || !strings.Contains(ps[0].Msg, "needs "+api.AnnotationL7TLSSecret) {
		t.Errorf("without a TLS Secret: %v", ps)
	}
}

// FuzzTLSPolicyAnnotation: never panics; a policy accepted without a
// problem passes the model's check.
func FuzzTLSPolicyAnnotation(f *testing.F) {
	f.Add(`{"minVersion":"1.3"}`)
	f.Add(`{"cipherSuites":["ECDHE-RSA-AES128-GCM-SHA256","ECDHE-RSA-AES128-GCM-SHA256"]}`)
	f.Fuzz(func(t *testing.T, v string) {
		var ps []string
		p := annotations{ann: map[string]string{api.AnnotationL7TLSPolicy: v}, bad: func(_, msg string) { ps = append(ps, msg) }}.tlsPolicy("t")
		if (p == nil) == (len(ps) == 0) {
			t.Fatalf("policy %+v with problems %v", p, ps)
		}
		if p != nil {
			if err := model.CheckTLSPolicy(p); err != nil {
				t.Fatalf("accepted a policy the model refuses: %v", err)
			}
		}
	})
}

// TestKubeHTTPSListenerTLSParams: the HTTPS listener of a Service gets the
// default TLS policy, or its annotation's, once translated.
func TestKubeHTTPSListenerTLSParams(t *testing.T) {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "t"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: []byte(testChain), corev1.TLSPrivateKeyKey: []byte(testKey)}}
	for policy, want := range map[string]tlsv3.TlsParameters_TlsProtocol{"": tlsv3.TlsParameters_TLSv1_2, `{"minVersion":"1.3"}`: tlsv3.TlsParameters_TLSv1_3} {
		ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7Hosts: "a.example.com", api.AnnotationL7TLSSecret: "t"}
		if policy != "" {
			ann[api.AnnotationL7TLSPolicy] = policy
		}
		b, _, ps := BuildService(service("web", "shop", ann, "203.0.113.10", port("https", 443)), nil, map[string]*corev1.Secret{"web/t": sec}, testNow)
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		r := model.Resolve(Assemble(map[string]Built{"web/shop": b}), model.Options{})
		ls := translate.Listeners(r, "default")
		if len(ls) != 1 || len(ls[0].GetFilterChains()) != 1 {
			t.Fatalf("listeners %v (problems %v)", ls, r.Problems)
		}
		var ctx tlsv3.DownstreamTlsContext
		if err := ls[0].GetFilterChains()[0].GetTransportSocket().GetTypedConfig().UnmarshalTo(&ctx); err != nil {
			t.Fatal(err)
		}
		p := ctx.GetCommonTlsContext().GetTlsParams()
		if p.GetTlsMinimumProtocolVersion() != want || p.GetTlsMaximumProtocolVersion() != tlsv3.TlsParameters_TLSv1_3 ||
			!slices.Equal(p.GetEcdhCurves(), model.ECDHCurves()) || (want == tlsv3.TlsParameters_TLSv1_2) != slices.Equal(p.GetCipherSuites(), model.DefaultCipherSuites()) {
			t.Errorf("policy %q: params %v", policy, p)
		}
	}
}
