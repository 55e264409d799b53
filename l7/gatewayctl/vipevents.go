package gatewayctl

import (
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// vipEventSelector selects the Events the IPAM writes when it refuses a
// Service a VIP: warnings about Services.
var vipEventSelector = fields.AndSelectors(
	fields.OneTermEqualSelector("involvedObject.kind", "Service"),
	fields.OneTermEqualSelector("type", corev1.EventTypeWarning),
).String()

// newVIPEventInformer watches the warnings about Services, the only
// place the IPAM says why a VIP Service got no VIP; onVIP is called for
// those about a VIP Service (name ending in "-vip", see VIPServiceName),
// so that a refusal reaches the Gateway's status, and a freed address
// (a later sync) is tried again.
func newVIPEventInformer(kube kubernetes.Interface, onVIP func()) cache.SharedIndexInformer {
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = vipEventSelector
	}))
	inf := f.Core().V1().Events().Informer()
	about := func(obj any) {
		if ev, ok := obj.(*corev1.Event); ok && strings.HasSuffix(ev.InvolvedObject.Name, "-vip") {
			onVIP()
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    about,
		UpdateFunc: func(_, obj any) { about(obj) },
	})
	return inf
}

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
