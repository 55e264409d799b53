package gatewayapi

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/model"
)

// builder holds the indexes of one Build and what it has produced so far.
type builder struct {
	in  Inputs
	out Result

	// classGroup is the gateway group of each accepted class of ours.
	classGroup map[string]string
	// classBad names our classes whose parameters are invalid.
	classBad map[string]bool
	gws      map[types.NamespacedName]*gateway
	gwOrder  []*gateway
	// sets are the ListenerSets naming Gateways of ours; setOrder holds
	// them in precedence order.
	sets     map[types.NamespacedName]*listenerSet
	setOrder []*listenerSet

	services   map[types.NamespacedName]*corev1.Service
	slices     map[types.NamespacedName][]*discoveryv1.EndpointSlice
	secrets    map[types.NamespacedName]*corev1.Secret
	configMaps map[types.NamespacedName]*corev1.ConfigMap
	namespaces map[string]*corev1.Namespace
	grants     []*gatewayv1.ReferenceGrant

	// routeServices is the model services of each route, by route kind
	// and namespace/name, for policies to attach to.
	routeServices map[routeKey][]int
	// routeGateways is the Gateways of ours each route names as parents,
	// the ancestors of the policies that target it.
	routeGateways map[routeKey][]types.NamespacedName
	certNames     map[string]bool
	// btls indexes the BackendTLSPolicies by target; btlsOrder holds
	// every one, oldest first.
	btls      map[backendTLSKey]*backendTLS
	btlsOrder []*backendTLS
	// serviceGateways are the Gateways of the routes forwarding to each
	// Service.
	serviceGateways map[types.NamespacedName][]types.NamespacedName
}

// routeKey names a route of one kind.
type routeKey struct {
	kind string
	name types.NamespacedName
}

func newBuilder(in Inputs) *builder {
	b := &builder{
		in: in,
		out: Result{Status: Status{
			GatewayClasses:     map[string]gatewayv1.GatewayClassStatus{},
			Gateways:           map[types.NamespacedName]gatewayv1.GatewayStatus{},
			HTTPRoutes:         map[types.NamespacedName]gatewayv1.HTTPRouteStatus{},
			GRPCRoutes:         map[types.NamespacedName]gatewayv1.GRPCRouteStatus{},
			TLSRoutes:          map[types.NamespacedName]gatewayv1.TLSRouteStatus{},
			TCPRoutes:          map[types.NamespacedName]gatewayv1.TCPRouteStatus{},
			UDPRoutes:          map[types.NamespacedName]gatewayv1.UDPRouteStatus{},
			TrafficPolicies:    map[types.NamespacedName]gatewayv1.PolicyStatus{},
			BackendTLSPolicies: map[types.NamespacedName]gatewayv1.PolicyStatus{},
		}},
		classGroup:      map[string]string{},
		classBad:        map[string]bool{},
		gws:             map[types.NamespacedName]*gateway{},
		services:        map[types.NamespacedName]*corev1.Service{},
		slices:          map[types.NamespacedName][]*discoveryv1.EndpointSlice{},
		secrets:         map[types.NamespacedName]*corev1.Secret{},
		configMaps:      map[types.NamespacedName]*corev1.ConfigMap{},
		namespaces:      map[string]*corev1.Namespace{},
		grants:          in.ReferenceGrants,
		routeServices:   map[routeKey][]int{},
		routeGateways:   map[routeKey][]types.NamespacedName{},
		certNames:       map[string]bool{},
		btls:            map[backendTLSKey]*backendTLS{},
		serviceGateways: map[types.NamespacedName][]types.NamespacedName{},
	}
	for _, s := range in.Services {
		b.services[nn(s.Namespace, s.Name)] = s
	}
	for _, s := range in.EndpointSlices {
		if svc := s.Labels[discoveryv1.LabelServiceName]; svc != "" {
			k := nn(s.Namespace, svc)
			b.slices[k] = append(b.slices[k], s)
		}
	}
	for _, s := range in.Secrets {
		b.secrets[nn(s.Namespace, s.Name)] = s
	}
	for _, c := range in.ConfigMaps {
		b.configMaps[nn(c.Namespace, c.Name)] = c
	}
	for _, n := range in.Namespaces {
		b.namespaces[n.Name] = n
	}
	return b
}

func nn(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// noteGateways records the Gateways of parents as those of route key.
func (b *builder) noteGateways(key routeKey, parents []parent) {
	for _, p := range parents {
		gw := nn(p.g.obj.Namespace, p.g.obj.Name)
		if !slices.Contains(b.routeGateways[key], gw) {
			b.routeGateways[key] = append(b.routeGateways[key], gw)
		}
	}
}

// classConfig returns the GatewayClassConfig named name.
func (b *builder) classConfig(name string) *tlbv1alpha1.GatewayClassConfig {
	for _, c := range b.in.ClassConfigs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// finish emits the model gateways and sorts the model.
func (b *builder) finish() {
	for _, g := range b.gwOrder {
		b.out.Status.Gateways[nn(g.obj.Namespace, g.obj.Name)] = b.gatewayStatus(g)
	}
	pool := b.out.Config.Certificates
	b.out.Config.Certificates = nil
	for _, g := range b.gwOrder {
		if mg, ok := g.model(); ok {
			b.out.Config.Gateways = append(b.out.Config.Gateways, mg)
			b.out.Config.Certificates = append(b.out.Config.Certificates, gatewayCertificates(mg, pool)...)
		}
	}
	c := &b.out.Config
	slices.SortFunc(c.Gateways, func(x, y model.Gateway) int { return cmp.Compare(x.Name, y.Name) })
	slices.SortFunc(c.Services, func(x, y model.Service) int { return cmp.Compare(x.Name, y.Name) })
	slices.SortFunc(c.Certificates, func(x, y model.Certificate) int { return cmp.Compare(x.Name, y.Name) })
}

// sortedByAge returns items oldest first, then by namespace/name: the
// order in which the spec settles conflicts.
func sortedByAge[T interface {
	GetCreationTimestamp() metav1.Time
	GetNamespace() string
	GetName() string
}](items []T) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int {
		ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		return cmp.Or(ta.Compare(tb.Time), cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out
}
