package kube

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
)

// GatewayGroup returns the gateway group named by an object's labels
// ("" when the label is absent).
func GatewayGroup(labels map[string]string) string { return labels[api.LabelGatewayGroup] }

// IsGateway reports whether node is labelled as a gateway node.
func IsGateway(node *corev1.Node) bool { return node.Labels[api.LabelGateway] == "true" }

// IsTLBService reports whether svc is a Service TLB serves: type
// LoadBalancer and either the class tlb.io/l4, or no class and the
// annotation tlb.io/enabled=true (the same rule as the ipam controller).
func IsTLBService(svc *corev1.Service) bool {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return false
	}
	if c := svc.Spec.LoadBalancerClass; c != nil {
		return *c == api.LoadBalancerClass
	}
	return svc.Annotations[api.AnnotationEnabled] == "true"
}

// IsReady reports whether node's Ready condition is True.
func IsReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
