package gatewayctl

import (
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

// vipEventSelector selects the Events the IPAM writes when it refuses a
// Service a VIP: warnings about Services (addressProblems checks both
// again: a fake client does not filter).
var vipEventSelector = fields.AndSelectors(
	fields.OneTermEqualSelector("involvedObject.kind", "Service"),
	fields.OneTermEqualSelector("type", corev1.EventTypeWarning),
).String()

// addressProblems returns, for each Gateway of p that has no VIP, the
// reason and message of the last warning Event about its VIP Service (the
// Service as it is now: same UID), "" when there is none.
func addressProblems(p vipPlan, services []*corev1.Service, have map[types.NamespacedName][]netip.Addr, events []*corev1.Event) map[types.NamespacedName]string {
	byName := map[types.NamespacedName]*corev1.Service{}
	for _, s := range services {
		byName[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	out := map[types.NamespacedName]string{}
	for gw, want := range p.services {
		if len(have[gw]) > 0 {
			continue
		}
		svc := byName[types.NamespacedName{Namespace: want.Namespace, Name: want.Name}]
		if svc == nil {
			continue
		}
		var last *corev1.Event
		for _, ev := range events {
			o := ev.InvolvedObject
			if ev.Type != corev1.EventTypeWarning || o.Kind != "Service" || o.Namespace != svc.Namespace || o.Name != svc.Name || o.UID != svc.UID {
				continue
			}
			if last == nil || eventTime(ev).After(eventTime(last)) {
				last = ev
			}
		}
		if last != nil {
			out[gw] = last.Reason + ": " + last.Message
		}
	}
	return out
}

// eventTime is when an Event last happened.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}
