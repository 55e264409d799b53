package gatewayctl

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// The status diff: each function returns the status to write (the
// computed one, with the LastTransitionTime of every condition whose
// status, reason and message did not change taken from the current one)
// and whether it differs from the current status. Nothing is written when
// it does not.

// keepTransitionTimes returns want with the LastTransitionTime of each
// condition copied from the condition of the same type in have when its
// status, reason and message are unchanged.
func keepTransitionTimes(have, want []metav1.Condition) []metav1.Condition {
	if want == nil {
		return nil
	}
	out := make([]metav1.Condition, len(want))
	for i, c := range want {
		if h := meta.FindStatusCondition(have, c.Type); h != nil &&
			h.Status == c.Status && h.Reason == c.Reason && h.Message == c.Message {
			c.LastTransitionTime = h.LastTransitionTime
		}
		out[i] = c
	}
	return out
}

// classStatus diffs a GatewayClass's status. No conditions in want keeps
// the current ones (see gatewayStatus).
func classStatus(have, want gatewayv1.GatewayClassStatus) (gatewayv1.GatewayClassStatus, bool) {
	if want.Conditions == nil {
		want.Conditions = have.Conditions
	}
	want.Conditions = keepTransitionTimes(have.Conditions, want.Conditions)
	return want, !apiequality.Semantic.DeepEqual(have, want)
}

// gatewayStatus diffs a Gateway's status, listeners matched by name. No
// conditions in want (Build said nothing) keeps the current ones: the
// CRD defaults an absent conditions list to Accepted and Programmed
// Unknown/Pending, so writing none would be answered by those defaults
// and every sync would write again.
func gatewayStatus(have, want gatewayv1.GatewayStatus) (gatewayv1.GatewayStatus, bool) {
	if want.Conditions == nil {
		want.Conditions = have.Conditions
	}
	want.Conditions = keepTransitionTimes(have.Conditions, want.Conditions)
	want.Listeners = keepListenerTimes(have.Listeners, want.Listeners,
		func(l *gatewayv1.ListenerStatus) (gatewayv1.SectionName, *[]metav1.Condition) {
			return l.Name, &l.Conditions
		})
	return want, !apiequality.Semantic.DeepEqual(have, want)
}

// routeStatus diffs a Route's status: the parents entries of other
// controllers are kept as they are, ours are replaced by want's (all of
// which are ours), matched by parentRef.
func routeStatus(have, want gatewayv1.RouteStatus) (gatewayv1.RouteStatus, bool) {
	var out gatewayv1.RouteStatus
	for _, p := range have.Parents {
		if p.ControllerName != gatewayapi.ControllerName {
			out.Parents = append(out.Parents, p)
		}
	}
	for _, p := range want.Parents {
		for _, h := range have.Parents {
			if h.ControllerName == gatewayapi.ControllerName && apiequality.Semantic.DeepEqual(h.ParentRef, p.ParentRef) {
				p.Conditions = keepTransitionTimes(h.Conditions, p.Conditions)
			}
		}
		p.ControllerName = gatewayapi.ControllerName
		out.Parents = append(out.Parents, p)
	}
	if out.Parents == nil && have.Parents != nil {
		out.Parents = []gatewayv1.RouteParentStatus{}
	}
	return out, !apiequality.Semantic.DeepEqual(normalParents(have.Parents), normalParents(out.Parents))
}

// policyStatus diffs a TrafficPolicy's status like routeStatus, by
// ancestorRef.
func policyStatus(have, want gatewayv1.PolicyStatus) (gatewayv1.PolicyStatus, bool) {
	var out gatewayv1.PolicyStatus
	for _, a := range have.Ancestors {
		if a.ControllerName != gatewayapi.ControllerName {
			out.Ancestors = append(out.Ancestors, a)
		}
	}
	for _, a := range want.Ancestors {
		for _, h := range have.Ancestors {
			if h.ControllerName == gatewayapi.ControllerName && apiequality.Semantic.DeepEqual(h.AncestorRef, a.AncestorRef) {
				a.Conditions = keepTransitionTimes(h.Conditions, a.Conditions)
			}
		}
		a.ControllerName = gatewayapi.ControllerName
		out.Ancestors = append(out.Ancestors, a)
	}
	if out.Ancestors == nil {
		out.Ancestors = []gatewayv1.PolicyAncestorStatus{} // required: never null
	}
	changed := (len(have.Ancestors) != 0 || len(out.Ancestors) != 0) && !apiequality.Semantic.DeepEqual(have.Ancestors, out.Ancestors)
	return out, changed
}

// normalParents treats a nil and an empty parents list alike.
func normalParents(p []gatewayv1.RouteParentStatus) []gatewayv1.RouteParentStatus {
	if len(p) == 0 {
		return nil
	}
	return p
}

// keepListenerTimes returns a copy of want, the listener statuses of a
// Gateway or ListenerSet, with each listener's conditions run through
// keepTransitionTimes against the listener of the same name in have;
// fields names a status's listener and its conditions.
func keepListenerTimes[T any](have, want []T, fields func(*T) (gatewayv1.SectionName, *[]metav1.Condition)) []T {
	if want == nil {
		return nil
	}
	out := make([]T, len(want))
	for i := range want {
		out[i] = want[i]
		name, conds := fields(&out[i])
		for j := range have {
			if hn, hc := fields(&have[j]); hn == name {
				*conds = keepTransitionTimes(*hc, *conds)
			}
		}
	}
	return out
}
