package gatewayctl

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/kubeobj"
)

// listers read the informer caches.
type listers struct {
	classes  gwlisters.GatewayClassLister
	gateways gwlisters.GatewayLister
	http     gwlisters.HTTPRouteLister
	grpc     gwlisters.GRPCRouteLister
	tls      gwlisters.TLSRouteLister
	grants   gwlisters.ReferenceGrantLister
	ns       corelisters.NamespaceLister
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	secrets  corelisters.SecretLister
	configs  cache.GenericLister
	policies cache.GenericLister
}

// inputs lists every cached object into gatewayapi.Inputs (without
// Addresses and Now). The objects belong to the caches: read only.
func (l listers) inputs() (gatewayapi.Inputs, error) {
	var in gatewayapi.Inputs
	var err error
	all := labels.Everything()
	list := func(what string, f func() error) {
		if err == nil {
			if e := f(); e != nil {
				err = fmt.Errorf("list %s from cache: %w", what, e)
			}
		}
	}
	list("GatewayClasses", func() (e error) { in.Classes, e = l.classes.List(all); return })
	list("Gateways", func() (e error) { in.Gateways, e = l.gateways.List(all); return })
	list("HTTPRoutes", func() (e error) { in.HTTPRoutes, e = l.http.List(all); return })
	list("GRPCRoutes", func() (e error) { in.GRPCRoutes, e = l.grpc.List(all); return })
	list("TLSRoutes", func() (e error) { in.TLSRoutes, e = l.tls.List(all); return })
	list("ReferenceGrants", func() (e error) { in.ReferenceGrants, e = l.grants.List(all); return })
	list("Namespaces", func() (e error) { in.Namespaces, e = l.ns.List(all); return })
	list("Services", func() (e error) { in.Services, e = l.services.List(all); return })
	list("EndpointSlices", func() (e error) { in.EndpointSlices, e = l.slices.List(all); return })
	list("Secrets", func() (e error) { in.Secrets, e = l.secrets.List(all); return })
	list("GatewayClassConfigs", func() (e error) {
		in.ClassConfigs, e = kubeobj.Typed[tlbv1alpha1.GatewayClassConfig](l.configs)
		return
	})
	list("TrafficPolicies", func() (e error) { in.TrafficPolicies, e = kubeobj.Typed[tlbv1alpha1.TrafficPolicy](l.policies); return })
	return in, err
}

// vipAddresses reads the VIP each Gateway got from its VIP Service's
// status.loadBalancer.ingress (written by the IPAM controller).
func vipAddresses(p vipPlan, services []*corev1.Service) map[types.NamespacedName][]netip.Addr {
	out := map[types.NamespacedName][]netip.Addr{}
	for _, s := range services {
		gw, ok := owningGateway(s)
		if !ok {
			continue
		}
		if _, ours := p.ours[gw]; !ours {
			continue
		}
		if want, wanted := p.services[gw]; wanted && want.Name != s.Name {
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
