package controller

import (
	"maps"
	"net/netip"
	"slices"
	"strings"

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

// planFor returns the desired state for the allocations of a Service;
// none means "nothing of ours", as for a Service that left TLB or is deleted.
//
// The VIP is written with ipMode Proxy: every packet to it must take
// TLB's path (router, director, tunnel, gateway node), so no node's
// service proxy may handle it. With ipMode VIP, kube-proxy (iptables,
// nftables and IPVS modes alike) and kube-proxy replacements program
// the VIP on every node: on a director it DNATs the VIP's packets before
// IPVS sees them, or holds the same IPVS service; on a gateway node it
// DNATs an L7 VIP straight to the pods, past Envoy, or REJECTs a
// Gateway's VIP (no endpoints); in-cluster clients skip the directors
// and gateways. See "Living with kube-proxy and CNIs" in
// docs/kubernetes.md.
//
// A dual-stack Service has one ingress per VIP, in the order of its
// spec.ipFamilies; its VIPs share one L4 cluster, and
// tlb.io/assigned-pool names their pools comma separated when they differ.
func planFor(als []ipam.Allocation) servicePlan {
	if len(als) == 0 {
		return servicePlan{}
	}
	_, pools := vipList(als)
	p := servicePlan{annotations: map[string]string{
		api.AnnotationAssignedPool:      strings.Join(pools, ","),
		api.AnnotationAssignedL4Cluster: als[0].L4Cluster,
	}}
	for _, al := range als {
		mode := corev1.LoadBalancerIPModeProxy
		p.ingress = append(p.ingress, corev1.LoadBalancerIngress{IP: al.Address.String(), IPMode: &mode})
	}
	return p
}

// joinAddrs joins addresses with a comma, as tlb.io/vip takes them.
func joinAddrs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
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
	ingressChanged := !sameIngress(svc.Status.LoadBalancer.Ingress, p.ingress)
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

// sameIngress compares what TLB writes of an ingress: the address and
// its ipMode, so that a VIP written with ipMode VIP by an earlier
// version is rewritten as Proxy (an unset ipMode reads as VIP, as the
// API server's default makes it).
func sameIngress(a, b []corev1.LoadBalancerIngress) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.LoadBalancerIngress) bool {
		return x.IP == y.IP && x.Hostname == y.Hostname && ipMode(x) == ipMode(y)
	})
}

func ipMode(in corev1.LoadBalancerIngress) corev1.LoadBalancerIPMode {
	if in.IPMode == nil {
		return corev1.LoadBalancerIPModeVIP
	}
	return *in.IPMode
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
