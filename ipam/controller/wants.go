package controller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/ipam"
)

// Finalizer keeps a Service until its VIP is released.
const Finalizer = "tlb.io/vip-release"

// wantsVIP reports whether svc asks TLB for a VIP: type LoadBalancer and
// either our class, or no class and the opt-in annotation.
func wantsVIP(svc *corev1.Service) bool {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return false
	}
	if c := svc.Spec.LoadBalancerClass; c != nil {
		return *c == ipam.LoadBalancerClass
	}
	return svc.Annotations[ipam.AnnotationEnabled] == "true"
}

// ownedByUs reports whether the controller has written to svc before: it
// carries our finalizer or our assignment annotation.
func ownedByUs(svc *corev1.Service) bool {
	if _, ok := svc.Annotations[ipam.AnnotationAssignedPool]; ok {
		return true
	}
	for _, f := range svc.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}
