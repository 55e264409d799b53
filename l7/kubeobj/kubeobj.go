// Package kubeobj reads the core Kubernetes objects the L7 model's
// Kubernetes sources share (l7/kube for annotated Services, l7/gatewayapi
// for Gateway API routes): the ready endpoints of a Service port from its
// EndpointSlices, and a kubernetes.io/tls Secret as a model.Certificate.
// Whichever object names a Service port or a Secret, it means the same.
package kubeobj

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// ReadyEndpoints returns the ready addresses of the slices with the TCP
// port whose name is portName, sorted, each once, weight 1. A nil Ready
// condition counts as ready, as the EndpointSlice API asks.
func ReadyEndpoints(endpointSlices []*discoveryv1.EndpointSlice, portName string) []model.Endpoint {
	return ReadyEndpointsOf(endpointSlices, portName, corev1.ProtocolTCP)
}

// ReadyEndpointsOf is ReadyEndpoints of the port of protocol proto (a
// UDPRoute's backends are UDP ports).
func ReadyEndpointsOf(endpointSlices []*discoveryv1.EndpointSlice, portName string, proto corev1.Protocol) []model.Endpoint {
	seen := map[netip.AddrPort]bool{}
	var out []model.Endpoint
	for _, s := range endpointSlices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		var port int32
		for _, p := range s.Ports {
			if p.Port != nil && ptrOr(p.Name) == portName && protocolOr(p.Protocol) == proto {
				port = *p.Port
			}
		}
		if port <= 0 || port > 65535 {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil {
					continue
				}
				ap := netip.AddrPortFrom(ip.Unmap(), uint16(port))
				if !seen[ap] {
					seen[ap] = true
					out = append(out, model.Endpoint{Addr: ap, Weight: 1})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b model.Endpoint) int { return a.Addr.Compare(b.Addr) })
	return out
}

// protocolOr is an EndpointSlice port's protocol, TCP when unset.
func protocolOr(p *corev1.Protocol) corev1.Protocol {
	if p == nil {
		return corev1.ProtocolTCP
	}
	return *p
}

func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TLSCertificate reads a kubernetes.io/tls Secret into a model.Certificate
// named name. The key goes only into model.PrivateKey; messages never
// carry Secret data. The key must match the certificate, and the
// certificate be valid at now.
func TLSCertificate(s *corev1.Secret, name, ns, secret string, now time.Time) (model.Certificate, string) {
	if s == nil || s.Type != corev1.SecretTypeTLS {
		return model.Certificate{}, fmt.Sprintf("no Secret %s/%s of type %s", ns, secret, corev1.SecretTypeTLS)
	}
	chain, key := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if !bytes.Contains(chain, []byte("-----BEGIN CERTIFICATE-----")) {
		return model.Certificate{}, fmt.Sprintf("Secret %s/%s: no PEM certificate in %s", ns, secret, corev1.TLSCertKey)
	}
	if !bytes.Contains(key, []byte("PRIVATE KEY-----")) {
		return model.Certificate{}, fmt.Sprintf("Secret %s/%s: no PEM private key in %s", ns, secret, corev1.TLSPrivateKeyKey)
	}
	if _, err := tlscert.Check(chain, key, now); err != nil {
		return model.Certificate{}, fmt.Sprintf("Secret %s/%s: %s", ns, secret, err)
	}
	return model.Certificate{
		Name:   name,
		Origin: model.Origin(ns + "/" + secret),
		Chain:  append([]byte(nil), chain...),
		Key:    model.NewPrivateKey(key),
	}, ""
}
