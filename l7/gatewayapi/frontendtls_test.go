package gatewayapi

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// caConfigMap is a ConfigMap holding a test CA under ca.crt.
func caConfigMap(t *testing.T, ns, name string) (*corev1.ConfigMap, []byte) {
	t.Helper()
	ca, _ := testPair(t, "ca.example")
	return &corev1.ConfigMap{ObjectMeta: meta(ns, name), Data: map[string]string{caBundleKey: string(ca)}}, ca
}

// TestFrontendClientCertificates: spec.tls.frontend is served (issue 24):
// the listeners of the port get the CA bundle, required unless
// AllowInsecureFallback (then a certificate that does not verify is let
// in and the Gateway says so); references that cannot be used set the
// listener's conditions as the spec names them, and a listener left
// without any CA is not served.
func TestFrontendClientCertificates(t *testing.T) {
	cmRef := func(kind, ns, name string) gatewayv1.ObjectReference {
		r := gatewayv1.ObjectReference{Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(name)}
		if ns != "" {
			r.Namespace = ptr(gatewayv1.Namespace(ns))
		}
		return r
	}
	type want struct {
		accepted, resolved string // Status/Reason
		ca                 []string
		required, untrust  bool
	}
	for name, tc := range map[string]struct {
		refs     []gatewayv1.ObjectReference
		mode     gatewayv1.FrontendValidationModeType
		grant    bool
		want     want
		insecure bool
	}{
		"valid":                 {refs: []gatewayv1.ObjectReference{cmRef("ConfigMap", "", "ca")}, want: want{"True/Accepted", "True/ResolvedRefs", []string{"ca"}, true, false}},
		"insecure fallback":     {refs: []gatewayv1.ObjectReference{cmRef("ConfigMap", "", "ca")}, mode: gatewayv1.AllowInsecureFallback, want: want{"True/Accepted", "True/ResolvedRefs", []string{"ca"}, false, true}, insecure: true},
		"missing ConfigMap":     {refs: []gatewayv1.ObjectReference{cmRef("ConfigMap", "", "nope")}, want: want{accepted: "False/NoValidCACertificate", resolved: "False/InvalidCACertificateRef"}},
		"ConfigMap without PEM": {refs: []gatewayv1.ObjectReference{cmRef("ConfigMap", "", "junk")}, want: want{accepted: "False/NoValidCACertificate", resolved: "False/InvalidCACertificateRef"}},
		"Service kind":          {refs: []gatewayv1.ObjectReference{cmRef("Service", "", "ca")}, want: want{accepted: "False/NoValidCACertificate", resolved: "False/InvalidCACertificateKind"}},
		"no grant":              {refs: []gatewayv1.ObjectReference{cmRef("ConfigMap", "other", "ca")}, want: want{accepted: "False/NoValidCACertificate", resolved: "False/RefNotPermitted"}},
		"grant":                 {refs: []gatewayv1.ObjectReference{cmRef("ConfigMap", "other", "ca")}, grant: true, want: want{"True/Accepted", "True/ResolvedRefs", []string{"other/ca"}, true, false}},
		"one of two unusable":   {refs: []gatewayv1.ObjectReference{cmRef("ConfigMap", "", "nope"), cmRef("ConfigMap", "", "ca")}, want: want{"True/Accepted", "False/InvalidCACertificateRef", []string{"ca"}, true, false}},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			cas := map[string][]byte{}
			for _, k := range []string{"ca", "other/ca"} {
				ns, n := "infra", k
				if k == "other/ca" {
					ns, n = "other", "ca"
				}
				cm, pem := caConfigMap(t, ns, n)
				in.ConfigMaps = append(in.ConfigMaps, cm)
				cas[k] = pem
			}
			in.ConfigMaps = append(in.ConfigMaps, &corev1.ConfigMap{ObjectMeta: meta("infra", "junk"), Data: map[string]string{caBundleKey: "not a certificate"}})
			if tc.grant {
				in.ReferenceGrants = append(in.ReferenceGrants, &gatewayv1.ReferenceGrant{ObjectMeta: meta("other", "ca"), Spec: gatewayv1.ReferenceGrantSpec{
					From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: kindGateway, Namespace: "infra"}},
					To:   []gatewayv1.ReferenceGrantTo{{Kind: kindConfigMap}},
				}})
			}
			in.Gateways[0].Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: &gatewayv1.FrontendTLSConfig{
				PerPort: []gatewayv1.TLSPortConfig{{Port: 443, TLS: gatewayv1.TLSConfig{Validation: &gatewayv1.FrontendTLSValidation{CACertificateRefs: tc.refs, Mode: tc.mode}}}},
			}}
			res := Build(in)
			st := res.Status.Gateways[gwKey]
			for _, ls := range st.Listeners {
				if ls.Name != "https" {
					continue
				}
				if got := condString(cond(t, ls.Conditions, "Accepted")); got != tc.want.accepted {
					t.Errorf("https Accepted = %s; want %s", got, tc.want.accepted)
				}
				if got := condString(cond(t, ls.Conditions, "ResolvedRefs")); got != tc.want.resolved {
					t.Errorf("https ResolvedRefs = %s; want %s", got, tc.want.resolved)
				}
			}
			if c := apimeta.FindStatusCondition(st.Conditions, string(gatewayv1.GatewayConditionInsecureFrontendValidationMode)); (c != nil) != tc.insecure {
				t.Errorf("InsecureFrontendValidationMode condition %v; want present %v", c, tc.insecure)
			}
			var https *model.Listener
			for _, g := range res.Config.Gateways {
				for i, l := range g.Listeners {
					if l.Port == 443 {
						https = &g.Listeners[i]
					}
					if l.Port != 443 && l.ClientCertificate != nil {
						t.Errorf("listener %s (port %d) validates client certificates; only port 443 asked", l.Name, l.Port)
					}
				}
			}
			if tc.want.ca == nil {
				if https != nil {
					t.Fatalf("port 443 served (%+v); want it left out without a usable CA", https)
				}
				return
			}
			if https == nil || https.ClientCertificate == nil {
				t.Fatalf("port 443 served without client certificate validation: %+v", https)
			}
			c := https.ClientCertificate
			var wantCA []byte
			for _, k := range tc.want.ca {
				wantCA = append(wantCA, cas[k]...)
			}
			if !bytes.Equal(c.CA, wantCA) || c.Required != tc.want.required || c.AcceptUntrusted != tc.want.untrust {
				t.Errorf("client certificate CA %d bytes (want %d), required %v (want %v), acceptUntrusted %v (want %v)",
					len(c.CA), len(wantCA), c.Required, tc.want.required, c.AcceptUntrusted, tc.want.untrust)
			}
			if ps := model.Resolve(res.Config, model.Options{}).Problems; len(ps) > 0 {
				t.Errorf("the model refuses it: %v", ps)
			}
		})
	}
}

func condString(c metav1.Condition) string { return string(c.Status) + "/" + c.Reason }
