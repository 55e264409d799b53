package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// The helpers other Kubernetes sources of the model (l7/gatewayapi)
// share with this one, so that a Service port or a TLS Secret means the
// same thing whichever object names it.

// ReadyEndpoints returns the ready addresses of endpointSlices (those of
// one Service) for the Service port named portName ("" for an unnamed
// port), sorted, each once, weight 1.
func ReadyEndpoints(endpointSlices []*discoveryv1.EndpointSlice, portName string) []model.Endpoint {
	return readyEndpoints(endpointSlices, portName)
}

// TLSCertificate reads the kubernetes.io/tls Secret s (nil when missing)
// into a model.Certificate named name. msg is empty when it is usable:
// a PEM chain and a matching key, valid at now. Messages never carry
// Secret data.
func TLSCertificate(s *corev1.Secret, name, namespace, secret string, now time.Time) (_ model.Certificate, msg string) {
	return certificate(s, name, namespace, secret, now)
}
