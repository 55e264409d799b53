package kube

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// standInSecrets answers every Secret the Services and Gateway API objects
// refer to with a stand-in (Options.StandIn): the TLS Secrets of annotated
// Services and of Gateways' certificateRefs, and the HMAC key of a
// TrafficPolicy's jwt. Nothing is read from the API server, so the l7 of
// the rate limit service needs no Secret access; what it builds is what
// the gateways' l7 builds from the real Secrets, except where a real
// Secret is missing or bad (then the gateways refuse a listener or a
// policy whose limits the rate limit service still holds: harmless, no
// request asks for them).
func standInSecrets(svcs []*corev1.Service, in gatewayapi.Inputs, s tlscert.StandIn) []*corev1.Secret {
	var out []*corev1.Secret
	add := func(ns, name string, data map[string][]byte) {
		if slices.ContainsFunc(out, func(o *corev1.Secret) bool { return o.Namespace == ns && o.Name == name }) {
			return
		}
		out = append(out, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeTLS, Data: data})
	}
	tls := func() map[string][]byte {
		return map[string][]byte{corev1.TLSCertKey: s.Chain, corev1.TLSPrivateKeyKey: s.Key}
	}
	for _, svc := range svcs {
		if name := svc.Annotations[api.AnnotationL7TLSSecret]; name != "" {
			add(svc.Namespace, name, tls())
		}
	}
	for _, gw := range in.Gateways {
		for _, l := range gw.Spec.Listeners {
			if l.TLS == nil {
				continue
			}
			for _, ref := range l.TLS.CertificateRefs {
				ns := gw.Namespace
				if ref.Namespace != nil && *ref.Namespace != "" {
					ns = string(*ref.Namespace)
				}
				add(ns, string(ref.Name), tls())
			}
		}
	}
	for _, p := range in.TrafficPolicies {
		if j := p.Spec.JWT; j != nil && j.HMACSecretRef != nil {
			// An HMAC key of 64 bytes: the stand-in key's PEM is longer.
			add(p.Namespace, j.HMACSecretRef.Name, map[string][]byte{j.HMACSecretRef.Key: s.Key[:64]})
		}
	}
	return out
}
