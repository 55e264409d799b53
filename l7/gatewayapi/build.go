package gatewayapi

import (
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/model"
)

// ControllerName is the spec.controllerName of the GatewayClasses TLB serves.
const ControllerName gatewayv1.GatewayController = "tlb.io/gateway-controller"

// Inputs is everything Build reads: the Gateway API objects, TLB's
// extension objects and the core objects routes refer to. Objects of
// other controllers' classes may be present; Build ignores them.
type Inputs struct {
	Classes         []*gatewayv1.GatewayClass
	ClassConfigs    []*tlbv1alpha1.GatewayClassConfig
	Gateways        []*gatewayv1.Gateway
	HTTPRoutes      []*gatewayv1.HTTPRoute
	GRPCRoutes      []*gatewayv1.GRPCRoute
	TLSRoutes       []*gatewayv1.TLSRoute
	TCPRoutes       []*gatewayv1.TCPRoute
	UDPRoutes       []*gatewayv1.UDPRoute
	ReferenceGrants []*gatewayv1.ReferenceGrant
	TrafficPolicies []*tlbv1alpha1.TrafficPolicy
	// BackendTLSPolicies make routes' upstreams speak TLS (backendtls.go).
	BackendTLSPolicies []*gatewayv1.BackendTLSPolicy
	Namespaces         []*corev1.Namespace
	Services           []*corev1.Service
	EndpointSlices     []*discoveryv1.EndpointSlice
	Secrets            []*corev1.Secret
	// ConfigMaps hold the CA certificates (key "ca.crt") of client
	// certificate validation and of BackendTLSPolicies.
	ConfigMaps []*corev1.ConfigMap
	// Addresses are the VIPs each Gateway got from the IPAM (read from
	// its VIP Services' status); a Gateway without one is not Programmed.
	Addresses map[types.NamespacedName][]netip.Addr
	// AddressProblems are, for a Gateway's requested addresses without a
	// VIP, why the IPAM gave none (each VIP Service's last warning); they
	// go into the Gateway's Programmed condition (addresses.go).
	AddressProblems map[types.NamespacedName][]AddressProblem
	// Now is the time written into condition transitions.
	Now time.Time
	// ListenerSets add listeners to the Gateways that allow them
	// (listenerset.go).
	ListenerSets []*gatewayv1.ListenerSet
}

// Result is the model of the accepted objects and the status of all of
// our class's objects.
type Result struct {
	Config model.Config
	Status Status
}

// Status is the status Build computed for each object of our classes,
// keyed by namespace/name (GatewayClasses by name).
type Status struct {
	GatewayClasses  map[string]gatewayv1.GatewayClassStatus
	Gateways        map[types.NamespacedName]gatewayv1.GatewayStatus
	HTTPRoutes      map[types.NamespacedName]gatewayv1.HTTPRouteStatus
	GRPCRoutes      map[types.NamespacedName]gatewayv1.GRPCRouteStatus
	TLSRoutes       map[types.NamespacedName]gatewayv1.TLSRouteStatus
	TCPRoutes       map[types.NamespacedName]gatewayv1.TCPRouteStatus
	UDPRoutes       map[types.NamespacedName]gatewayv1.UDPRouteStatus
	TrafficPolicies map[types.NamespacedName]gatewayv1.PolicyStatus
	// BackendTLSPolicies are keyed like the others; every policy has
	// an entry (its ancestors may be none).
	BackendTLSPolicies map[types.NamespacedName]gatewayv1.PolicyStatus
	// ListenerSets has every set naming a Gateway of ours.
	ListenerSets map[types.NamespacedName]gatewayv1.ListenerSetStatus
}

// Build translates in into the model and the status of every object of
// our classes. It is pure and deterministic: equal inputs give equal
// results, with every list sorted.
func Build(in Inputs) Result {
	b := newBuilder(in)
	b.classes()
	b.gateways()
	b.listenerSets()
	b.backendTLSPolicies()
	b.httpRoutes()
	b.grpcRoutes()
	b.tlsRoutes()
	b.tcpRoutes()
	b.udpRoutes()
	b.policies()
	b.backendTLSStatus()
	b.listenerSetStatuses()
	b.finish()
	return b.out
}
