package gatewayctl

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	if want.Listeners != nil {
		ls := make([]gatewayv1.ListenerEntryStatus, len(want.Listeners))
		for i, l := range want.Listeners {
			for _, h := range have.Listeners {
				if h.Name == l.Name {
					l.Conditions = keepTransitionTimes(h.Conditions, l.Conditions)
				}
			}
			ls[i] = l
		}
		want.Listeners = ls
	}
	return want, !apiequality.Semantic.DeepEqual(have, want)
}
