package gatewaywatch

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/kubeobj"
)

// The tlb.io/v1alpha1 resources read.
var (
	ClassConfigResource   = tlbv1alpha1.SchemeGroupVersion.WithResource(tlbv1alpha1.ResourceGatewayClassConfigs)
	TrafficPolicyResource = tlbv1alpha1.SchemeGroupVersion.WithResource(tlbv1alpha1.ResourceTrafficPolicies)
)

// watchCluster watches the cluster-scoped kinds (GatewayClasses,
// Namespaces, GatewayClassConfigs) and, with o.Core, the Services,
// EndpointSlices and Secrets of every namespace.
func (w *Watch) watchCluster(o Options) {
	gw := gwinformers.NewSharedInformerFactory(o.Gateway, 0)
	classes := gw.Gateway().V1().GatewayClasses()
	w.watch(classes.Informer(), "GatewayClasses", func(in *gatewayapi.Inputs) error { return appendList(&in.Classes, classes.Lister().List) })
	w.factories = append(w.factories, gw)

	core := informers.NewSharedInformerFactory(o.Kube, 0)
	v1 := core.Core().V1()
	nss := v1.Namespaces()
	w.watch(nss.Informer(), "Namespaces", func(in *gatewayapi.Inputs) error { return appendList(&in.Namespaces, nss.Lister().List) })
	if o.Core {
		svcs, secs, eps := v1.Services(), v1.Secrets(), core.Discovery().V1().EndpointSlices()
		w.watch(svcs.Informer(), "Services", func(in *gatewayapi.Inputs) error { return appendList(&in.Services, svcs.Lister().List) })
		w.watch(eps.Informer(), "EndpointSlices", func(in *gatewayapi.Inputs) error { return appendList(&in.EndpointSlices, eps.Lister().List) })
		w.watch(secs.Informer(), "Secrets", func(in *gatewayapi.Inputs) error { return appendList(&in.Secrets, secs.Lister().List) })
	}
	w.factories = append(w.factories, core)

	if o.Dynamic != nil && o.Served.tlb(tlbv1alpha1.ResourceGatewayClassConfigs) {
		dyn := dynamicinformer.NewDynamicSharedInformerFactory(o.Dynamic, 0)
		inf := dyn.ForResource(ClassConfigResource)
		w.watch(inf.Informer(), "GatewayClassConfigs", func(in *gatewayapi.Inputs) error {
			cs, err := kubeobj.Typed[tlbv1alpha1.GatewayClassConfig](inf.Lister())
			in.ClassConfigs = append(in.ClassConfigs, cs...)
			return err
		})
		w.factories = append(w.factories, dyn)
	}
}

// watchNamespace watches the namespaced kinds served in ns (every
// namespace when ns is empty), with o.CABundles its ConfigMaps.
func (w *Watch) watchNamespace(o Options, ns string) {
	f := gwinformers.NewSharedInformerFactoryWithOptions(o.Gateway, 0, gwinformers.WithNamespace(ns))
	v1 := f.Gateway().V1()
	gws := v1.Gateways()
	w.watch(gws.Informer(), "Gateways", func(in *gatewayapi.Inputs) error { return appendList(&in.Gateways, gws.Lister().List) })
	if o.Served.gateway("listenersets") {
		ls := v1.ListenerSets()
		w.watch(ls.Informer(), "ListenerSets", func(in *gatewayapi.Inputs) error { return appendList(&in.ListenerSets, ls.Lister().List) })
	}
	if o.Served.gateway("httproutes") {
		hr := v1.HTTPRoutes()
		w.watch(hr.Informer(), "HTTPRoutes", func(in *gatewayapi.Inputs) error { return appendList(&in.HTTPRoutes, hr.Lister().List) })
	}
	if o.Served.gateway("grpcroutes") {
		gr := v1.GRPCRoutes()
		w.watch(gr.Informer(), "GRPCRoutes", func(in *gatewayapi.Inputs) error { return appendList(&in.GRPCRoutes, gr.Lister().List) })
	}
	if o.Served.gateway("tlsroutes") {
		tr := v1.TLSRoutes()
		w.watch(tr.Informer(), "TLSRoutes", func(in *gatewayapi.Inputs) error { return appendList(&in.TLSRoutes, tr.Lister().List) })
	}
	if o.Served.gateway("tcproutes") {
		tr := v1.TCPRoutes()
		w.watch(tr.Informer(), "TCPRoutes", func(in *gatewayapi.Inputs) error { return appendList(&in.TCPRoutes, tr.Lister().List) })
	}
	if o.Served.gateway("udproutes") {
		ur := v1.UDPRoutes()
		w.watch(ur.Informer(), "UDPRoutes", func(in *gatewayapi.Inputs) error { return appendList(&in.UDPRoutes, ur.Lister().List) })
	}
	if o.Served.gateway("referencegrants") {
		rg := v1.ReferenceGrants()
		w.watch(rg.Informer(), "ReferenceGrants", func(in *gatewayapi.Inputs) error { return appendList(&in.ReferenceGrants, rg.Lister().List) })
	}
	if o.Served.gateway("backendtlspolicies") {
		bt := v1.BackendTLSPolicies()
		w.watch(bt.Informer(), "BackendTLSPolicies", func(in *gatewayapi.Inputs) error {
			return appendList(&in.BackendTLSPolicies, bt.Lister().List)
		})
	}
	w.factories = append(w.factories, f)
	if o.CABundles {
		// The CA certificates (key ca.crt) of client certificate
		// validation and of BackendTLSPolicies.
		core := informers.NewSharedInformerFactoryWithOptions(o.Kube, 0, informers.WithNamespace(ns))
		cms := core.Core().V1().ConfigMaps()
		w.watch(cms.Informer(), "ConfigMaps", func(in *gatewayapi.Inputs) error { return appendList(&in.ConfigMaps, cms.Lister().List) })
		w.factories = append(w.factories, core)
	}
	if o.Dynamic != nil && o.Served.tlb(tlbv1alpha1.ResourceTrafficPolicies) {
		dyn := dynamicinformer.NewFilteredDynamicSharedInformerFactory(o.Dynamic, 0, ns, nil)
		inf := dyn.ForResource(TrafficPolicyResource)
		w.watch(inf.Informer(), "TrafficPolicies", func(in *gatewayapi.Inputs) error {
			ps, err := kubeobj.Typed[tlbv1alpha1.TrafficPolicy](inf.Lister())
			in.TrafficPolicies = append(in.TrafficPolicies, ps...)
			return err
		})
		w.factories = append(w.factories, dyn)
	}
}

func appendList[T any](dst *[]*T, list func(labels.Selector) ([]*T, error)) error {
	items, err := list(labels.Everything())
	*dst = append(*dst, items...)
	return err
}
