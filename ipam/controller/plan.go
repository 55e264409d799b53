package controller

import (
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/ipam"
)

// servicePlan is the desired TLB-owned part of one Service: whether it
// carries the finalizer, its assignment annotations (nil: none) and its
// load balancer ingress.
type servicePlan struct {
	finalizer   bool
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
		finalizer: true,
		annotations: map[string]string{
			ipam.AnnotationAssignedPool:      al.Pool,
			ipam.AnnotationAssignedL4Cluster: al.L4Cluster,
		},
		ingress: []corev1.LoadBalancerIngress{{IP: al.Address.String(), IPMode: &vip}},
	}
}

// serviceDiff says which writes bring svc to the plan.
type serviceDiff struct {
	// meta is the Service with finalizer and annotations changed, or nil.
	meta *corev1.Service
	// status is the Service with status changed, or nil.
	status *corev1.Service
}

func (d serviceDiff) empty() bool { return d.meta == nil && d.status == nil }

// diffService compares svc with p and returns deep copies carrying the
// changes. It never changes svc, which belongs to the informer cache.
func diffService(svc *corev1.Service, p servicePlan) serviceDiff {
	var d serviceDiff
	hasFin := slices.Contains(svc.Finalizers, Finalizer)
	wantAnn := func(k string) (string, bool) { v, ok := p.annotations[k]; return v, ok }
	annChanged := false
	for _, k := range []string{ipam.AnnotationAssignedPool, ipam.AnnotationAssignedL4Cluster} {
		want, wok := wantAnn(k)
		got, gok := svc.Annotations[k]
		if want != got || wok != gok {
			annChanged = true
		}
	}
	if hasFin != p.finalizer || annChanged {
		m := svc.DeepCopy()
		if p.finalizer && !hasFin {
			m.Finalizers = append(m.Finalizers, Finalizer)
		}
		if !p.finalizer && hasFin {
			m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == Finalizer })
		}
		if m.Annotations == nil && len(p.annotations) > 0 {
			m.Annotations = map[string]string{}
		}
		delete(m.Annotations, ipam.AnnotationAssignedPool)
		delete(m.Annotations, ipam.AnnotationAssignedL4Cluster)
		maps.Copy(m.Annotations, p.annotations)
		d.meta = m
	}
	if !sameIngressIPs(svc.Status.LoadBalancer.Ingress, p.ingress) {
		s := svc.DeepCopy()
		s.Status.LoadBalancer.Ingress = p.ingress
		d.status = s
	}
	return d
}

func sameIngressIPs(a, b []corev1.LoadBalancerIngress) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.LoadBalancerIngress) bool {
		return x.IP == y.IP && x.Hostname == y.Hostname
	})
}

// statusIP returns the first ingress IP recorded in svc's status.
func statusIP(svc *corev1.Service) (netip.Addr, bool) {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(in.IP); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}
