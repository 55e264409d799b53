package kube

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
)

// IsL7 reports whether svc goes through the L7 gateway tier (annotation
// tlb.io/l7 "true", as netd and the L7 controller read it): its backends
// then decide whether its VIP is up for GTM.
func IsL7(svc *corev1.Service) bool { return svc.Annotations[api.AnnotationL7] == "true" }

// IsGatewayVIP reports whether svc is the VIP Service of a Gateway API
// Gateway (label api.LabelOwningGateway, set by the gateway controller).
// Its ports are the Gateway's listener ports, served by the L7 gateways,
// so netd maps them to the listeners' ports as for an L7 Service. For GTM
// it is not an L7 service: it has no selector and no endpoints of its own
// (the routes' backends are many, and one backend down must not take the
// VIP of every route with it), so its VIP is up exactly when an L4 VIP is:
// while a real server (a gateway node of its L4 cluster's group) is up.
func IsGatewayVIP(svc *corev1.Service) bool {
	_, ok := svc.Labels[api.LabelOwningGateway]
	return ok
}

// UsesListenerPorts reports whether the VIPs of svc reach the L7
// gateways' listeners, whose ports netd maps (443 -> 10443): an L7
// Service or a Gateway's VIP Service.
func UsesListenerPorts(svc *corev1.Service) bool { return IsL7(svc) || IsGatewayVIP(svc) }
