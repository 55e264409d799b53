package gatewayapi

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// backendTLSPolicy is app/name for Service web (port section), CA
// ConfigMap ca, hostname web.internal.
func backendTLSPolicy(name, section string, age time.Duration, ca ...gatewayv1.LocalObjectReference) *gatewayv1.BackendTLSPolicy {
	if ca == nil {
		ca = []gatewayv1.LocalObjectReference{{Kind: kindConfigMap, Name: "ca"}}
	}
	p := &gatewayv1.BackendTLSPolicy{ObjectMeta: meta("app", name), Spec: gatewayv1.BackendTLSPolicySpec{
		TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: kindService, Name: "web"}}},
		Validation: gatewayv1.BackendTLSPolicyValidation{CACertificateRefs: ca, Hostname: "web.internal"},
	}}
	if section != "" {
		p.Spec.TargetRefs[0].SectionName = ptr(gatewayv1.SectionName(section))
	}
	p.Generation = 4
	p.CreationTimestamp = metav1.NewTime(testNow.Add(-age))
	return p
}

// TestBackendTLSPolicy: a BackendTLSPolicy makes the upstreams of its
// Service speak TLS (SNI the hostname, the ConfigMap's CA, the SANs);
// its status is under the Gateway of the route using the Service; a
// policy without a usable CA leaves the backend failing (500), never
// plain text; a younger policy for the same target is Conflicted.
func TestBackendTLSPolicy(t *testing.T) {
	setup := func(t *testing.T, ps ...*gatewayv1.BackendTLSPolicy) (Result, []byte) {
		in := world(t)
		cm, ca := caConfigMap(t, "app", "ca")
		in.ConfigMaps = append(in.ConfigMaps, cm)
		in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r"))
		in.BackendTLSPolicies = ps
		return Build(in), ca
	}
	upstream := func(t *testing.T, res Result) model.Upstream {
		t.Helper()
		for _, s := range res.Config.Services {
			for _, u := range s.Upstreams {
				if strings.HasPrefix(u.Name, "app.web.8080") {
					return u
				}
			}
		}
		t.Fatalf("no upstream app.web.8080 in %+v", res.Config.Services)
		return model.Upstream{}
	}
	status := func(t *testing.T, res Result, name string) (accepted, resolved string) {
		t.Helper()
		st := res.Status.BackendTLSPolicies[nn("app", name)]
		if len(st.Ancestors) != 1 || st.Ancestors[0].AncestorRef.Name != "gw" || ptrStr(st.Ancestors[0].AncestorRef.Namespace) != "infra" || st.Ancestors[0].ControllerName != ControllerName {
			t.Fatalf("policy %s ancestors %+v; want Gateway infra/gw", name, st.Ancestors)
		}
		cs := st.Ancestors[0].Conditions
		for _, c := range cs {
			if c.ObservedGeneration != 4 {
				t.Errorf("policy %s %s observedGeneration %d", name, c.Type, c.ObservedGeneration)
			}
		}
		return condString(cond(t, cs, "Accepted")), condString(cond(t, cs, "ResolvedRefs"))
	}

	t.Run("served", func(t *testing.T) {
		p := backendTLSPolicy("tls", "", time.Hour)
		p.Spec.Validation.SubjectAltNames = []gatewayv1.SubjectAltName{
			{Type: gatewayv1.HostnameSubjectAltNameType, Hostname: "web.example.com"},
			{Type: gatewayv1.URISubjectAltNameType, URI: "spiffe://cluster.local/ns/app/sa/web"},
		}
		res, ca := setup(t, p)
		u := upstream(t, res)
		if u.TLS == nil || u.TLS.SNI != "web.internal" || !bytes.Equal(u.TLS.CA, ca) ||
			!slices.Equal(u.TLS.SubjectAltNames, []string{"web.example.com"}) || !slices.Equal(u.TLS.URISubjectAltNames, []string{"spiffe://cluster.local/ns/app/sa/web"}) {
			t.Errorf("upstream TLS %+v; want SNI web.internal, the ConfigMap's CA, both SANs", u.TLS)
		}
		// A TLS upstream has its own name: adding or changing a policy
		// makes a new Envoy cluster, never one changed in place.
		if !strings.HasPrefix(u.Name, "app.web.8080.tls-") {
			t.Errorf("TLS upstream named %q; want app.web.8080.tls-<hash>", u.Name)
		}
		p2 := p.DeepCopy()
		p2.Spec.Validation.Hostname = "other.internal"
		if res2, _ := setup(t, p2); upstream(t, res2).Name == u.Name {
			t.Errorf("another hostname kept the upstream name %q", u.Name)
		}
		if a, r := status(t, res, "tls"); a != "True/Accepted" || r != "True/ResolvedRefs" {
			t.Errorf("status Accepted %s ResolvedRefs %s", a, r)
		}
		if ps := model.Resolve(res.Config, model.Options{}).Problems; len(ps) > 0 {
			t.Errorf("the model refuses it: %v", ps)
		}
	})
	t.Run("port section of another port", func(t *testing.T) {
		res, _ := setup(t, backendTLSPolicy("tls", "metrics", time.Hour))
		if u := upstream(t, res); u.TLS != nil || u.Name != "app.web.8080" {
			t.Errorf("upstream of port http speaks TLS under a policy for port metrics: %+v", u.TLS)
		}
	})
	for name, tc := range map[string]struct {
		ref              gatewayv1.LocalObjectReference
		accepted, reason string
	}{
		"missing ConfigMap": {gatewayv1.LocalObjectReference{Kind: kindConfigMap, Name: "nope"}, "False/NoValidCACertificate", "False/InvalidCACertificateRef"},
		"Secret kind":       {gatewayv1.LocalObjectReference{Kind: kindSecret, Name: "ca"}, "False/NoValidCACertificate", "False/InvalidKind"},
	} {
		t.Run(name, func(t *testing.T) {
			res, _ := setup(t, backendTLSPolicy("tls", "", time.Hour, tc.ref))
			if a, r := status(t, res, "tls"); a != tc.accepted || r != tc.reason {
				t.Errorf("status Accepted %s ResolvedRefs %s; want %s, %s", a, r, tc.accepted, tc.reason)
			}
			for _, s := range res.Config.Services {
				for _, u := range s.Upstreams {
					if strings.HasPrefix(u.Name, "app.web.8080") {
						t.Errorf("upstream %s served (TLS %v) under a policy without CA; want its share failed", u.Name, u.TLS)
					}
				}
				for _, r := range s.Routes {
					if r.Responses == nil || r.Responses.DirectResponse == nil || r.Responses.DirectResponse.Status != 500 {
						t.Errorf("route %+v of %s; want a 500", r, s.Name)
					}
				}
			}
		})
	}
	t.Run("conflict", func(t *testing.T) {
		res, _ := setup(t, backendTLSPolicy("young", "", time.Minute), backendTLSPolicy("old", "", time.Hour))
		if a, _ := status(t, res, "old"); a != "True/Accepted" {
			t.Errorf("older policy Accepted %s", a)
		}
		if a, _ := status(t, res, "young"); a != "False/Conflicted" {
			t.Errorf("younger policy Accepted %s; want False/Conflicted", a)
		}
	})
}
