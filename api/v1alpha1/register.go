package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of TLB's own resources.
const GroupName = "tlb.io"

// SchemeGroupVersion is tlb.io/v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// VIPPoolResource, L4ClusterResource and BGPPeerResource name the
// resources for dynamic clients.
var (
	VIPPoolResource   = SchemeGroupVersion.WithResource("vippools")
	L4ClusterResource = SchemeGroupVersion.WithResource("l4clusters")
	BGPPeerResource   = SchemeGroupVersion.WithResource("bgppeers")
)

// Resource names of the Gateway API extension types.
const (
	ResourceGatewayClassConfigs = "gatewayclassconfigs"
	ResourceTrafficPolicies     = "trafficpolicies"
)

// AddToScheme registers the types of tlb.io/v1alpha1 with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion,
		&VIPPool{}, &VIPPoolList{}, &L4Cluster{}, &L4ClusterList{},
		&GatewayClassConfig{}, &GatewayClassConfigList{},
		&TrafficPolicy{}, &TrafficPolicyList{},
		&BGPPeer{}, &BGPPeerList{},
	)
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
