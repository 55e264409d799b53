package kube

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// vipAddresses reads the VIP each Gateway got from the status of its VIP
// Service: the Service labelled api.LabelOwningGateway whose controller
// is the Gateway (same namespace), as the Gateway controller makes it.
func vipAddresses(services []*corev1.Service) map[types.NamespacedName][]netip.Addr {
	out := map[types.NamespacedName][]netip.Addr{}
	for _, svc := range services {
		if _, ok := svc.Labels[api.LabelOwningGateway]; !ok {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(svc)
		if ref == nil || ref.Kind != "Gateway" {
			continue
		}
		gw := types.NamespacedName{Namespace: svc.Namespace, Name: ref.Name}
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if a, err := netip.ParseAddr(in.IP); err == nil {
				out[gw] = append(out[gw], a)
			}
		}
	}
	return out
}

// mergeGroup adds to cfg the gateways and services of from that belong to
// group, and the certificates those gateways declare: a Source serves its
// own group alone, whatever other groups the Gateway API objects name.
func mergeGroup(cfg *model.Config, from model.Config, group string) {
	mine := map[model.GatewayID]bool{}
	for _, g := range from.Gateways {
		if g.Group != group {
			continue
		}
		cfg.Gateways = append(cfg.Gateways, g)
		mine[g.ID()] = true
	}
	for _, s := range from.Services {
		if s.Group == group {
			cfg.Services = append(cfg.Services, s)
		}
	}
	for _, c := range from.Certificates {
		if mine[c.Gateway] {
			cfg.Certificates = append(cfg.Certificates, c)
		}
	}
}
