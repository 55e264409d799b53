package controller

import (
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/ipam"
)

// servicePlan is the desired TLB-owned part of one Service: its
// assignment annotations (nil: none) and its load balancer ingress.
type servicePlan struct {
	annotations map[string]string
	ingress     []corev1.LoadBalancerIngress
}

// planFor returns the desired state for an allocation; a zero Allocation
// means "nothing of ours", as for a Service that left TLB or is deleted.
func planFor(al ipam.Allocation) servicePlan {
	if !al.Address.IsValid() {
		return servicePlan{}
	}
	vip := corev1.LoadBalancerIPModeVIP
	return servicePlan{
		annotations: map[string]string{
			api.AnnotationAssignedPool:      al.Pool,
			api.AnnotationAssignedL4Cluster: al.L4Cluster,
		},
		ingress: []corev1.LoadBalancerIngress{{IP: al.Address.String(), IPMode: &vip}},
	}
}

// diffService compares svc with p and returns the one write that brings
// svc to the plan, or nil when svc is already there. The write goes to
// the status subresource and carries the annotations too (the API server
// keeps metadata changes made through services/status, as Kubernetes' own
// service controller relies on for its finalizer), so one request gives
// a Service its VIP and the annotations the directors select it by. It
// also drops LegacyFinalizer, which earlier versions added. It never
// changes svc, which belongs to the informer cache.
func diffService(svc *corev1.Service, p servicePlan) *corev1.Service {
	legacy := slices.Contains(svc.Finalizers, LegacyFinalizer)
	annChanged := false
	for _, k := range []string{api.AnnotationAssignedPool, api.AnnotationAssignedL4Cluster} {
		want, wok := p.annotations[k]
		got, gok := svc.Annotations[k]
		if want != got || wok != gok {
			annChanged = true
		}
	}
	ingressChanged := !sameIngressIPs(svc.Status.LoadBalancer.Ingress, p.ingress)
	if !legacy && !annChanged && !ingressChanged {
		return nil
	}
	w := svc.DeepCopy()
	w.Finalizers = slices.DeleteFunc(w.Finalizers, func(f string) bool { return f == LegacyFinalizer })
	if w.Annotations == nil && len(p.annotations) > 0 {
		w.Annotations = map[string]string{}
	}
	delete(w.Annotations, api.AnnotationAssignedPool)
	delete(w.Annotations, api.AnnotationAssignedL4Cluster)
	maps.Copy(w.Annotations, p.annotations)
	if ingressChanged {
		w.Status.LoadBalancer.Ingress = p.ingress
	}
	return w
}

func sameIngressIPs(a, b []corev1.LoadBalancerIngress) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.LoadBalancerIngress) bool {
		return x.IP == y.IP && x.Hostname == y.Hostname
	})
}

// statusIP returns the first ingress IP recorded in svc's status.
func statusIP(svc *corev1.Service) (netip.Addr, bool) {
	if ips := statusIPs(svc); len(ips) > 0 {
		return ips[0], true
	}
	return netip.Addr{}, false
}

// statusIPs returns every ingress IP recorded in svc's status.
func statusIPs(svc *corev1.Service) []netip.Addr {
	var out []netip.Addr
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(in.IP); err == nil {
			out = append(out, a)
		}
	}
	return out
}
