package gatewayctl

import (
	"fmt"
	"net/netip"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// statusWrites are copies of cached objects whose status must be written.
type statusWrites struct {
	classes  []*gatewayv1.GatewayClass
	gateways []*gatewayv1.Gateway
	http     []*gatewayv1.HTTPRoute
	grpc     []*gatewayv1.GRPCRoute
	tls      []*gatewayv1.TLSRoute
	tcp      []*gatewayv1.TCPRoute
	udp      []*gatewayv1.UDPRoute
	policies []*tlbv1alpha1.TrafficPolicy
	btls     []*gatewayv1.BackendTLSPolicy
	sets     []*gatewayv1.ListenerSet
}

func (w statusWrites) empty() bool { return w.len() == 0 }

// len is how many statuses w writes.
func (w statusWrites) len() int {
	return len(w.classes) + len(w.gateways) + len(w.http) + len(w.grpc) + len(w.tls) + len(w.tcp) + len(w.udp) + len(w.policies) + len(w.btls) + len(w.sets)
}

// planStatus diffs the status Build computed with each cached object's.
// The controller owns two parts of a Gateway's status itself: its
// addresses (from the VIP Service) and, for spec.addresses TLB cannot
// serve or a VIP Service name that is taken, the Accepted or Programmed
// condition that says so. Routes and TrafficPolicies not in want lose the
// entries of our controller. Objects pending says a write of ours has
// replaced, but the cache does not show yet, are left for a later sync.
func planStatus(in gatewayapi.Inputs, p vipPlan, d vipDiff, want gatewayapi.Status, pending func(kind string, o metav1.Object) bool) statusWrites {
	if pending == nil {
		pending = func(string, metav1.Object) bool { return false }
	}
	var w statusWrites
	for _, gc := range in.Classes {
		st, ok := want.GatewayClasses[gc.Name]
		if !ok || pending(kindGatewayClass, gc) {
			continue
		}
		if st, changed := classStatus(gc.Status, st); changed {
			cp := gc.DeepCopy()
			cp.Status = st
			w.classes = append(w.classes, cp)
		}
	}
	for _, gw := range in.Gateways {
		key := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
		if _, ours := p.ours[key]; !ours || pending(kindGateway, gw) {
			continue
		}
		built := want.Gateways[key]
		if built.Conditions == nil {
			// Build said nothing: keep the current conditions but for
			// the ones the overrides own, which they set again if due.
			built.Conditions = withoutOverrides(gw.Status.Conditions)
		}
		st := gatewayOverrides(gw, built, in.Addresses[key], p.unsupported[key], d.conflicts[key], in.Now)
		if st, changed := gatewayStatus(gw.Status, st); changed {
			cp := gw.DeepCopy()
			cp.Status = st
			w.gateways = append(w.gateways, cp)
		}
	}
	w.http = planRoutes(kindHTTPRoute, in.HTTPRoutes, pending, func(n types.NamespacedName) gatewayv1.RouteStatus { return want.HTTPRoutes[n].RouteStatus },
		func(r *gatewayv1.HTTPRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus }, (*gatewayv1.HTTPRoute).DeepCopy)
	w.grpc = planRoutes(kindGRPCRoute, in.GRPCRoutes, pending, func(n types.NamespacedName) gatewayv1.RouteStatus { return want.GRPCRoutes[n].RouteStatus },
		func(r *gatewayv1.GRPCRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus }, (*gatewayv1.GRPCRoute).DeepCopy)
	w.tls = planRoutes(kindTLSRoute, in.TLSRoutes, pending, func(n types.NamespacedName) gatewayv1.RouteStatus { return want.TLSRoutes[n].RouteStatus },
		func(r *gatewayv1.TLSRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus }, (*gatewayv1.TLSRoute).DeepCopy)
	w.tcp = planRoutes(kindTCPRoute, in.TCPRoutes, pending, func(n types.NamespacedName) gatewayv1.RouteStatus { return want.TCPRoutes[n].RouteStatus },
		func(r *gatewayv1.TCPRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus }, (*gatewayv1.TCPRoute).DeepCopy)
	w.udp = planRoutes(kindUDPRoute, in.UDPRoutes, pending, func(n types.NamespacedName) gatewayv1.RouteStatus { return want.UDPRoutes[n].RouteStatus },
		func(r *gatewayv1.UDPRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus }, (*gatewayv1.UDPRoute).DeepCopy)
	planPolicyStatus(in, want, pending, &w)
	w.sets = planListenerSets(in, want, pending)
	return w
}

// planPolicyStatus adds to w the TrafficPolicies and BackendTLSPolicies
// whose status differs from want.
func planPolicyStatus(in gatewayapi.Inputs, want gatewayapi.Status, pending func(kind string, o metav1.Object) bool, w *statusWrites) {
	for _, tp := range in.TrafficPolicies {
		if pending(kindTrafficPolicy, tp) {
			continue
		}
		if st, changed := policyStatus(tp.Status, want.TrafficPolicies[nameOf(tp)]); changed {
			cp := tp.DeepCopy()
			cp.Status = st
			w.policies = append(w.policies, cp)
		}
	}
	for _, bp := range in.BackendTLSPolicies {
		if pending(kindBackendTLSPolicy, bp) {
			continue
		}
		if st, changed := policyStatus(bp.Status, want.BackendTLSPolicies[nameOf(bp)]); changed {
			cp := bp.DeepCopy()
			cp.Status = st
			w.btls = append(w.btls, cp)
		}
	}
}

// planRoutes returns a copy, with the status Build computed (want, by
// name), of each route of one kind whose status differs from it; status
// points into a route's RouteStatus. Routes pending says are in flight
// are left for a later sync.
func planRoutes[R metav1.Object](kind string, rs []R, pending func(string, metav1.Object) bool,
	want func(types.NamespacedName) gatewayv1.RouteStatus, status func(R) *gatewayv1.RouteStatus, deepCopy func(R) R) []R {
	var out []R
	for _, r := range rs {
		if pending(kind, r) {
			continue
		}
		if st, changed := routeStatus(*status(r), want(nameOf(r))); changed {
			cp := deepCopy(r)
			*status(cp) = st
			out = append(out, cp)
		}
	}
	return out
}

// Kinds whose status the controller writes.
const (
	kindGatewayClass  = "GatewayClass"
	kindGateway       = "Gateway"
	kindHTTPRoute     = "HTTPRoute"
	kindGRPCRoute     = "GRPCRoute"
	kindTLSRoute      = "TLSRoute"
	kindTCPRoute      = "TCPRoute"
	kindUDPRoute      = "UDPRoute"
	kindTrafficPolicy = "TrafficPolicy"
	// kindBackendTLSPolicy is gateway.networking.k8s.io's.
	kindBackendTLSPolicy = "BackendTLSPolicy"
)

func nameOf(o metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}

// gatewayOverrides sets the parts of a Gateway's status the controller
// owns on st, the status Build computed.
func gatewayOverrides(gw *gatewayv1.Gateway, st gatewayv1.GatewayStatus, vips []netip.Addr, unsupported, conflict string, now time.Time) gatewayv1.GatewayStatus {
	st = *st.DeepCopy()
	st.Addresses = nil
	ip := gatewayv1.IPAddressType
	for _, a := range vips {
		st.Addresses = append(st.Addresses, gatewayv1.GatewayStatusAddress{Type: &ip, Value: a.String()})
	}
	set := func(typ gatewayv1.GatewayConditionType, reason gatewayv1.GatewayConditionReason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: string(typ), Status: metav1.ConditionFalse, Reason: string(reason), Message: msg,
			ObservedGeneration: gw.Generation, LastTransitionTime: metav1.NewTime(now),
		})
	}
	switch {
	case unsupported != "":
		set(gatewayv1.GatewayConditionAccepted, gatewayv1.GatewayReasonUnsupportedAddress, unsupported)
		set(gatewayv1.GatewayConditionProgrammed, gatewayv1.GatewayReasonAddressNotUsable, unsupported)
	case conflict != "":
		set(gatewayv1.GatewayConditionProgrammed, gatewayv1.GatewayReasonAddressNotAssigned, conflict)
	case len(vips) == 0 && meta.FindStatusCondition(st.Conditions, string(gatewayv1.GatewayConditionProgrammed)) == nil:
		set(gatewayv1.GatewayConditionProgrammed, gatewayv1.GatewayReasonAddressNotAssigned,
			fmt.Sprintf("Gateway %s/%s: the IPAM has not assigned a VIP to its Service %s yet (see its Events)", gw.Namespace, gw.Name, VIPServiceName(gw.Name)))
	}
	return st
}

// withoutOverrides returns conds without the conditions gatewayOverrides
// sets, and without the CRD's default Programmed Pending, which an
// override replaces (never nil, so that an empty result is written as
// such).
func withoutOverrides(conds []metav1.Condition) []metav1.Condition {
	out := []metav1.Condition{}
	for _, c := range conds {
		switch {
		case c.Type == string(gatewayv1.GatewayConditionAccepted) && c.Reason == string(gatewayv1.GatewayReasonUnsupportedAddress),
			c.Type == string(gatewayv1.GatewayConditionProgrammed) && (c.Reason == string(gatewayv1.GatewayReasonAddressNotAssigned) ||
				c.Reason == string(gatewayv1.GatewayReasonAddressNotUsable) || c.Reason == string(gatewayv1.GatewayReasonPending)):
			continue
		}
		out = append(out, c)
	}
	return out
}
