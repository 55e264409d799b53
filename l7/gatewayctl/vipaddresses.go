package gatewayctl

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlbproject/tlb/l7/gatewaywatch"
)

// addresses are the VIPs each Gateway of ours has: those of the Services
// serving its requests, in the order of spec.addresses, or, for a Gateway
// without desired Services (unsupported addresses, an unresolved class),
// those of the VIP Services it has.
func (d vipDiff) addresses(p vipPlan, services []*corev1.Service) map[types.NamespacedName][]netip.Addr {
	out := map[types.NamespacedName][]netip.Addr{}
	for gw, ss := range d.serving {
		for _, s := range ss {
			if s != nil {
				out[gw] = append(out[gw], ingressIPs(s)...)
			}
		}
	}
	for gw, ips := range gatewaywatch.VIPAddresses(services, func(gw types.NamespacedName, _ *corev1.Service) bool {
		_, ours := p.ours[gw]
		_, wanted := p.services[gw]
		return ours && !wanted
	}) {
		out[gw] = ips
	}
	return out
}

// waiting reports whether a requested address of gw has no VIP yet.
func (d vipDiff) waiting(gw types.NamespacedName) bool {
	for _, s := range d.serving[gw] {
		if s == nil || len(ingressIPs(s)) == 0 {
			return true
		}
	}
	return false
}

// ingressIPs are the VIPs the IPAM wrote into svc's status.
func ingressIPs(svc *corev1.Service) []netip.Addr {
	var out []netip.Addr
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(in.IP); err == nil {
			out = append(out, a)
		}
	}
	return out
}
