// Package v1alpha1 holds the Go types of the tlb.io/v1alpha1 custom
// resources that describe VIP pools and L4 clusters, with hand-written deep
// copies. Their schemas live in deploy/crds/; the two must agree.
//
// It owns only the types; it must not talk to the API server.
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of TLB's resources.
const GroupName = "tlb.io"

// SchemeGroupVersion is the group and version of these types.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// VIPPoolResource and L4ClusterResource name the resources for dynamic
// clients.
var (
	VIPPoolResource   = SchemeGroupVersion.WithResource("vippools")
	L4ClusterResource = SchemeGroupVersion.WithResource("l4clusters")
)

// AddToScheme registers the types with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &VIPPool{}, &VIPPoolList{}, &L4Cluster{}, &L4ClusterList{})
	return nil
}
