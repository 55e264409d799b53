package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
)

// KindTrafficPolicy is the kind of TrafficPolicy.
const KindTrafficPolicy = "TrafficPolicy"

// TrafficPolicy attaches the DSL's gateway functions (interceptors, JWT
// and roles, rate limits, CORS) to Gateway API objects of its namespace
// by targetRefs: policy attachment (GEP-713), not HTTPRoute ExtensionRef
// filters. One policy can cover a whole Gateway (every route attached to
// it) as well as one route or one named rule, where an ExtensionRef must
// be repeated in every rule of every route; and it is how Envoy Gateway
// (SecurityPolicy, BackendTrafficPolicy) and the other implementations
// carry functions beyond the spec, so teams moving from them find the
// same shape.
//
// Precedence: a policy on a rule (a route target with sectionName) beats
// one on its route, which beats one on the Gateway (with sectionName, on
// a listener; without, the whole Gateway); between two policies on the
// same target the oldest wins and the other is Conflicted. A policy
// replaces the settings of a less specific one field by field (a route
// policy with only cors keeps the Gateway policy's rate limits).
type TrafficPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TrafficPolicySpec      `json:"spec"`
	Status gatewayv1.PolicyStatus `json:"status,omitempty"`
}

// TrafficPolicySpec names its targets and the functions applied to them.
// The functions are the schema of package api, shared with the DSL
// (l7/dsl) and the Service annotations (l7/kube), and checked as
// strictly (l7/policy).
type TrafficPolicySpec struct {
	// TargetRefs are Gateways, HTTPRoutes or GRPCRoutes of the policy's
	// namespace (group gateway.networking.k8s.io). sectionName names a
	// listener of a Gateway or a rule (spec.rules[].name) of a route.
	TargetRefs []gatewayv1.LocalPolicyTargetReferenceWithSectionName `json:"targetRefs"`
	// Interceptors run in order in the authorization service before a
	// request goes upstream (the DSL's routes[].interceptors).
	Interceptors api.InterceptorChain `json:"interceptors,omitempty"`
	// JWT authenticates JSON Web Tokens (the DSL's jwt). It applies to
	// whole routes: a target with sectionName cannot carry it.
	JWT *PolicyJWT `json:"jwt,omitempty"`
	// Auth is the JWT requirement and roles of the targeted routes (the
	// DSL's routes[].auth); it needs JWT, here or on a less specific
	// policy.
	Auth *api.RouteAuth `json:"auth,omitempty"`
	// CORS is the cross-origin policy (the DSL's cors).
	CORS *api.CORS `json:"cors,omitempty"`
	// RateLimit is the rate limits (the DSL's rateLimit).
	RateLimit *api.RateLimit `json:"rateLimit,omitempty"`
}

// PolicyJWT is the DSL's jwt block with Kubernetes key sources: exactly
// one of JWKS (public keys, inline) and HMACSecretRef.
type PolicyJWT struct {
	api.JWT `json:",inline"`
	// JWKS is a JSON Web Key Set of public keys.
	JWKS string `json:"jwks,omitempty"`
	// HMACSecretRef names a Secret of the policy's namespace and the key
	// that holds the shared secret of HS256/384/512 tokens.
	HMACSecretRef *SecretKeyRef `json:"hmacSecretRef,omitempty"`
}

// SecretKeyRef is one key of a Secret in the policy's namespace.
type SecretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// TrafficPolicyList is a list of TrafficPolicies.
type TrafficPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []TrafficPolicy `json:"items"`
}
