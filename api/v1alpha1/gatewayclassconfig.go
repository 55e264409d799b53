package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KindGatewayClassConfig is the kind a GatewayClass's parametersRef names.
const KindGatewayClassConfig = "GatewayClassConfig"

// DefaultGatewayGroup is the L7 gateway group of a class without one.
const DefaultGatewayGroup = "default"

// GatewayClassConfig is the parameters of a GatewayClass of TLB: where the
// VIPs of its Gateways come from and which L7 gateway group serves them.
type GatewayClassConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GatewayClassConfigSpec `json:"spec"`
}

// GatewayClassConfigSpec is the desired placement of a class's Gateways.
type GatewayClassConfigSpec struct {
	// Environment is the IPAM environment whose pools and L4 clusters
	// serve the class's VIPs; empty for the IPAM's default.
	Environment string `json:"environment,omitempty"`
	// Pool names one VIPPool of that environment; empty for any.
	Pool string `json:"pool,omitempty"`
	// GatewayGroup is the L7 gateway group (shard) that serves the
	// class's listeners; it must belong to Environment. Empty for
	// DefaultGatewayGroup.
	GatewayGroup string `json:"gatewayGroup,omitempty"`
}

// Group returns the gateway group of the class, defaulted.
func (s GatewayClassConfigSpec) Group() string {
	if s.GatewayGroup == "" {
		return DefaultGatewayGroup
	}
	return s.GatewayGroup
}

// GatewayClassConfigList is a list of GatewayClassConfigs.
type GatewayClassConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []GatewayClassConfig `json:"items"`
}
