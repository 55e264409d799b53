package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindTrafficPolicy is the kind of TrafficPolicy.
const KindTrafficPolicy = "TrafficPolicy"

// TrafficPolicy attaches the DSL's gateway functions to Gateway API
// objects of its namespace by targetRefs (policy attachment, GEP-713).
type TrafficPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TrafficPolicySpec      `json:"spec"`
	Status gatewayv1.PolicyStatus `json:"status,omitempty"`
}

// TrafficPolicySpec names its targets and the functions applied to them.
type TrafficPolicySpec struct {
	// TargetRefs are Gateways, HTTPRoutes or GRPCRoutes of the policy's
	// namespace (group gateway.networking.k8s.io).
	TargetRefs []gatewayv1.LocalPolicyTargetReferenceWithSectionName `json:"targetRefs"`
}

// TrafficPolicyList is a list of TrafficPolicies.
type TrafficPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []TrafficPolicy `json:"items"`
}
