package gatewayctl

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// kindListenerSet is gateway.networking.k8s.io's.
const kindListenerSet = "ListenerSet"

// planListenerSets returns a copy, with the status Build computed, of
// each ListenerSet naming a Gateway of ours whose status differs from
// it. Sets naming other Gateways are another controller's; sets pending
// says are in flight are left for a later sync.
func planListenerSets(in gatewayapi.Inputs, want gatewayapi.Status, pending func(string, metav1.Object) bool) []*gatewayv1.ListenerSet {
	var out []*gatewayv1.ListenerSet
	for _, ls := range in.ListenerSets {
		st, ok := want.ListenerSets[nameOf(ls)]
		if !ok || pending(kindListenerSet, ls) {
			continue
		}
		if st, changed := listenerSetStatus(ls.Status, st); changed {
			cp := ls.DeepCopy()
			cp.Status = st
			out = append(out, cp)
		}
	}
	return out
}

// listenerSetStatus diffs a ListenerSet's status like gatewayStatus,
// listeners matched by name.
func listenerSetStatus(have, want gatewayv1.ListenerSetStatus) (gatewayv1.ListenerSetStatus, bool) {
	want.Conditions = keepTransitionTimes(have.Conditions, want.Conditions)
	want.Listeners = keepListenerTimes(have.Listeners, want.Listeners,
		func(l *gatewayv1.ListenerEntryStatus) (gatewayv1.SectionName, *[]metav1.Condition) {
			return l.Name, &l.Conditions
		})
	return want, !apiequality.Semantic.DeepEqual(have, want)
}

// addSetPorts adds to the planned VIP Service of each Gateway the ports
// of the ListenerSets naming it, when its spec.allowedListeners admits
// their namespace (a Selector admits every namespace here): the L4 tier
// forwards only a VIP's Service ports. Build decides which sets attach
// and which of their listeners are served; a port left without a
// served listener reaches Envoy, which refuses the connection.
func addSetPorts(p vipPlan, sets []*gatewayv1.ListenerSet) {
	for _, ls := range sets {
		ref := ls.Spec.ParentRef
		if (ref.Group != nil && *ref.Group != gatewayv1.GroupName) || (ref.Kind != nil && *ref.Kind != "Gateway") {
			continue
		}
		ns := ls.Namespace
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = string(*ref.Namespace)
		}
		key := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
		svcs, gw := p.services[key], p.ours[key]
		if len(svcs) == 0 || gw == nil || !admitsSets(gw, ls.Namespace) {
			continue
		}
		for _, svc := range svcs { // one per requested address
			svc.Spec.Ports = withSetPorts(svc.Spec.Ports, ls.Spec.Listeners)
		}
	}
}

// withSetPorts returns ports with a Service port for each listener of a
// ListenerSet that ports lacks, sorted by port and protocol.
func withSetPorts(ports []corev1.ServicePort, listeners []gatewayv1.ListenerEntry) []corev1.ServicePort {
	for _, l := range listeners {
		ports = withListenerPort(ports, l.Protocol, l.Port)
	}
	sortPorts(ports)
	return ports
}

// admitsSets reports whether gw's spec.allowedListeners may admit
// ListenerSets of namespace ns (Selector: any namespace).
func admitsSets(gw *gatewayv1.Gateway, ns string) bool {
	al := gw.Spec.AllowedListeners
	if al == nil || al.Namespaces == nil || al.Namespaces.From == nil {
		return false
	}
	switch *al.Namespaces.From {
	case gatewayv1.NamespacesFromAll, gatewayv1.NamespacesFromSelector:
		return true
	case gatewayv1.NamespacesFromSame:
		return ns == gw.Namespace
	}
	return false
}
