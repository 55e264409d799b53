package gatewaywatch

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlbproject/tlb/api"
)

// OwningGateway returns the Gateway a VIP Service belongs to (labelled
// api.LabelOwningGateway, with a controller ownerReference of kind
// Gateway), if any.
func OwningGateway(svc *corev1.Service) (types.NamespacedName, bool) {
	if _, ok := svc.Labels[api.LabelOwningGateway]; !ok {
		return types.NamespacedName{}, false
	}
	ref := metav1.GetControllerOfNoCopy(svc)
	if ref == nil || ref.Kind != "Gateway" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: svc.Namespace, Name: ref.Name}, true
}

// VIPAddresses reads the VIP each Gateway got from its VIP Service's
// status.loadBalancer.ingress (written by the IPAM controller). keep,
// when set, says which of a Gateway's VIP Services count.
func VIPAddresses(services []*corev1.Service, keep func(gw types.NamespacedName, svc *corev1.Service) bool) map[types.NamespacedName][]netip.Addr {
	out := map[types.NamespacedName][]netip.Addr{}
	for _, s := range services {
		gw, ok := OwningGateway(s)
		if !ok || keep != nil && !keep(gw, s) {
			continue
		}
		for _, in := range s.Status.LoadBalancer.Ingress {
			if a, err := netip.ParseAddr(in.IP); err == nil {
				out[gw] = append(out[gw], a)
			}
		}
	}
	return out
}
