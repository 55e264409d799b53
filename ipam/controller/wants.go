package controller

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
)

// LegacyFinalizer was added to Services by earlier versions of the
// controller to hold them until their VIP was released. The controller no
// longer adds it (allocations are rebuilt from status, as MetalLB does, so
// a deleted Service's VIP is free once it is gone) and removes it wherever
// it finds it, so that no deletion waits for the controller.
const LegacyFinalizer = "tlb.io/vip-release"

// wantsVIP reports whether svc asks TLB for a VIP: type LoadBalancer and
// either our class, or no class and the opt-in annotation.
func wantsVIP(svc *corev1.Service) bool {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return false
	}
	if c := svc.Spec.LoadBalancerClass; c != nil {
		return *c == api.LoadBalancerClass
	}
	return svc.Annotations[api.AnnotationEnabled] == "true"
}

// ownedByUs reports whether the controller has written to svc before: it
// carries our assignment annotation or the finalizer of earlier versions.
func ownedByUs(svc *corev1.Service) bool {
	if _, ok := svc.Annotations[api.AnnotationAssignedPool]; ok {
		return true
	}
	return slices.Contains(svc.Finalizers, LegacyFinalizer)
}
