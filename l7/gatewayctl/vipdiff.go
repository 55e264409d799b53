package gatewayctl

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/gatewaywatch"
)

// vipDiff is the explicit difference between the desired and the existing
// VIP Services.
type vipDiff struct {
	create []*corev1.Service
	// update are copies of existing Services with the managed fields set.
	update []*corev1.Service
	delete []*corev1.Service
	keep   int
	// conflicts name Gateways whose VIP Service name is taken by a
	// Service that is not theirs.
	conflicts map[types.NamespacedName]string
}

func (d vipDiff) empty() bool { return len(d.create)+len(d.update)+len(d.delete) == 0 }

// diffVIPs compares the plan with the cached Services. A VIP Service whose
// Gateway is gone or no longer of our classes is deleted; one of a
// Gateway of ours that has no desired Service (unsupported addresses, an
// unresolved class) is kept as it is.
func diffVIPs(p vipPlan, services []*corev1.Service) vipDiff {
	d := vipDiff{conflicts: map[types.NamespacedName]string{}}
	byName := map[types.NamespacedName]*corev1.Service{}
	for _, s := range services {
		byName[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	handled := map[types.NamespacedName]bool{}
	for _, s := range services {
		gw, ok := gatewaywatch.OwningGateway(s)
		if !ok {
			continue
		}
		want, wanted := p.services[gw]
		_, isOurs := p.ours[gw]
		switch {
		case wanted && want.Name == s.Name:
			handled[gw] = true
			if w := updateVIP(s, want); w != nil {
				d.update = append(d.update, w)
			} else {
				d.keep++
			}
		case !isOurs, wanted:
			d.delete = append(d.delete, s)
		default:
			d.keep++
		}
	}
	for _, gw := range slices.SortedFunc(maps.Keys(p.services), compareNames) {
		if handled[gw] {
			continue
		}
		want := p.services[gw]
		if taken, ok := byName[types.NamespacedName{Namespace: want.Namespace, Name: want.Name}]; ok {
			d.conflicts[gw] = fmt.Sprintf("Gateway %s: its VIP Service name %s/%s is taken by a Service that is not its own; rename that Service",
				gw, taken.Namespace, taken.Name)
			continue
		}
		d.create = append(d.create, want)
	}
	return d
}

func compareNames(a, b types.NamespacedName) int {
	if a.Namespace != b.Namespace {
		if a.Namespace < b.Namespace {
			return -1
		}
		return 1
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

// updateVIP returns a copy of cur with the fields the controller owns set
// as in want, or nil when they already are. Fields others own (the IPAM's
// annotations and status, the API server's defaults) are kept.
func updateVIP(cur, want *corev1.Service) *corev1.Service {
	same := cur.Labels[api.LabelOwningGateway] == want.Labels[api.LabelOwningGateway] && sameInfrastructure(cur, want) &&
		cur.Spec.Type == want.Spec.Type &&
		apiequality.Semantic.DeepEqual(cur.Spec.LoadBalancerClass, want.Spec.LoadBalancerClass) &&
		apiequality.Semantic.DeepEqual(cur.OwnerReferences, want.OwnerReferences) &&
		samePorts(cur.Spec.Ports, want.Spec.Ports)
	for _, k := range managedAnnotations {
		cv, cok := cur.Annotations[k]
		wv, wok := want.Annotations[k]
		same = same && cv == wv && cok == wok
	}
	if same {
		return nil
	}
	w := cur.DeepCopy()
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[api.LabelOwningGateway] = want.Labels[api.LabelOwningGateway]
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	for _, k := range managedAnnotations {
		delete(w.Annotations, k)
		if v, ok := want.Annotations[k]; ok {
			w.Annotations[k] = v
		}
	}
	applyInfrastructure(w, cur, want)
	w.OwnerReferences = want.OwnerReferences
	w.Spec.Type = want.Spec.Type
	w.Spec.LoadBalancerClass = want.Spec.LoadBalancerClass
	w.Spec.Ports = want.Spec.Ports
	return w
}

// samePorts compares the fields of the ports the controller sets.
func samePorts(a, b []corev1.ServicePort) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.ServicePort) bool {
		return x.Name == y.Name && x.Port == y.Port && x.Protocol == y.Protocol
	})
}
