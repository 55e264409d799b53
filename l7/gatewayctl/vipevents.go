package gatewayctl

import (
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// vipEventSelector selects the Events the IPAM writes when it refuses a
// Service a VIP: warnings about Services (addressProblems checks both
// again: a fake client does not filter).
var vipEventSelector = fields.AndSelectors(
	fields.OneTermEqualSelector("involvedObject.kind", "Service"),
	fields.OneTermEqualSelector("type", corev1.EventTypeWarning),
).String()

// addressProblems returns, for each requested address of the Gateways of
// p without a VIP, the reason and message of the last warning Event about
// the VIP Service serving it (the Service as it is now: same UID), with
// the address it asks for; none when there is no such Event.
func addressProblems(p vipPlan, d vipDiff, events []*corev1.Event) map[types.NamespacedName][]gatewayapi.AddressProblem {
	out := map[types.NamespacedName][]gatewayapi.AddressProblem{}
	for gw, serving := range d.serving {
		for i, svc := range serving {
			if svc == nil || len(ingressIPs(svc)) > 0 {
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
			if last == nil {
				continue
			}
			// Invalid for a request without value.
			asked, _ := netip.ParseAddr(p.services[gw][i].Annotations[api.AnnotationVIP])
			out[gw] = append(out[gw], gatewayapi.AddressProblem{Address: asked, Reason: last.Reason, Message: last.Message})
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
