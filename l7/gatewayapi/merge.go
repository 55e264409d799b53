package gatewayapi

import (
	"reflect"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The merges the controller applies before it compares and writes a
// status: Build stamps every condition with Inputs.Now, and these keep
// the previous transition time of every condition that did not change,
// so an unchanged object gets an equal status and no write.

// MergeGatewayClassStatus merges next over prev (see MergeConditions).
func MergeGatewayClassStatus(prev, next gatewayv1.GatewayClassStatus) gatewayv1.GatewayClassStatus {
	next.Conditions = MergeConditions(prev.Conditions, next.Conditions)
	return next
}

// MergeGatewayStatus merges next over prev: the Gateway's conditions and
// each listener's, matched by name.
func MergeGatewayStatus(prev, next gatewayv1.GatewayStatus) gatewayv1.GatewayStatus {
	next.Conditions = MergeConditions(prev.Conditions, next.Conditions)
	listeners := make([]gatewayv1.ListenerStatus, len(next.Listeners))
	for i, l := range next.Listeners {
		for _, p := range prev.Listeners {
			if p.Name == l.Name {
				l.Conditions = MergeConditions(p.Conditions, l.Conditions)
			}
		}
		listeners[i] = l
	}
	if next.Listeners != nil {
		next.Listeners = listeners
	}
	return next
}

// MergeRouteStatus merges the parents Build computed (ours) over prev: it
// keeps the parents other controllers wrote, in their order, then ours
// in Build's order, each with the transition times of the same parentRef
// in prev.
func MergeRouteStatus(prev, next gatewayv1.RouteStatus) gatewayv1.RouteStatus {
	out := []gatewayv1.RouteParentStatus{}
	for _, p := range prev.Parents {
		if p.ControllerName != ControllerName {
			out = append(out, p)
		}
	}
	for _, n := range next.Parents {
		for _, p := range prev.Parents {
			if p.ControllerName == ControllerName && reflect.DeepEqual(p.ParentRef, n.ParentRef) {
				n.Conditions = MergeConditions(p.Conditions, n.Conditions)
			}
		}
		out = append(out, n)
	}
	return gatewayv1.RouteStatus{Parents: out}
}

// MergePolicyStatus merges a TrafficPolicy's ancestors like
// MergeRouteStatus does a route's parents.
func MergePolicyStatus(prev, next gatewayv1.PolicyStatus) gatewayv1.PolicyStatus {
	out := []gatewayv1.PolicyAncestorStatus{}
	for _, p := range prev.Ancestors {
		if p.ControllerName != ControllerName {
			out = append(out, p)
		}
	}
	for _, n := range next.Ancestors {
		for _, p := range prev.Ancestors {
			if p.ControllerName == ControllerName && reflect.DeepEqual(p.AncestorRef, n.AncestorRef) {
				n.Conditions = MergeConditions(p.Conditions, n.Conditions)
			}
		}
		out = append(out, n)
	}
	return gatewayv1.PolicyStatus{Ancestors: out}
}
