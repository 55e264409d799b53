package gatewayctl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

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
	// conflicts name Gateways a VIP Service name of which is taken by a
	// Service that is not theirs.
	conflicts map[types.NamespacedName]string
	// serving are, by Gateway and in the order of the plan's Services,
	// the existing Services that serve each requested address (nil for
	// one created now, or whose name is taken).
	serving map[types.NamespacedName][]*corev1.Service
}

func (d vipDiff) empty() bool { return len(d.create)+len(d.update)+len(d.delete) == 0 }

// diffVIPs compares the plan with the cached Services. A VIP Service whose
// Gateway is gone or no longer of our classes is deleted; those of a
// Gateway of ours that has no desired Service (unsupported addresses, an
// unresolved class) are kept as they are. The Services of each other
// Gateway of ours are matched to its requests by matchVIPs.
func diffVIPs(p vipPlan, services []*corev1.Service) vipDiff {
	d := vipDiff{conflicts: map[types.NamespacedName]string{}, serving: map[types.NamespacedName][]*corev1.Service{}}
	byName := map[types.NamespacedName]*corev1.Service{}
	own := map[types.NamespacedName][]*corev1.Service{}
	for _, s := range services {
		byName[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
		gw, ok := gatewaywatch.OwningGateway(s)
		if !ok {
			continue
		}
		_, isOurs := p.ours[gw]
		_, wanted := p.services[gw]
		switch {
		case !isOurs:
			d.delete = append(d.delete, s)
		case !wanted:
			d.keep++
		default:
			own[gw] = append(own[gw], s)
		}
	}
	for _, gw := range slices.SortedFunc(maps.Keys(p.services), compareNames) {
		ss := own[gw]
		slices.SortFunc(ss, func(a, b *corev1.Service) int { return strings.Compare(a.Name, b.Name) })
		d.matchVIPs(gw, p.services[gw], ss, byName)
	}
	return d
}

// matchVIPs diffs the desired VIP Services of Gateway gw with its
// existing ones (sorted by name). An existing Service asking for the same
// address (or, for a request without value, for none) keeps serving it,
// whatever its name: a request moving in spec.addresses moves no VIP.
// Each other request takes over an existing Service of gw no request
// kept (updated to ask for the new address), else gets a new Service
// named by the first name of vipServiceName's sequence not in use.
// Services left over are deleted.
func (d *vipDiff) matchVIPs(gw types.NamespacedName, want, have []*corev1.Service, byName map[types.NamespacedName]*corev1.Service) {
	serving := make([]*corev1.Service, len(want))
	used := map[string]bool{}
	for i, w := range want {
		for _, s := range have {
			if !used[s.Name] && s.Annotations[api.AnnotationVIP] == w.Annotations[api.AnnotationVIP] {
				serving[i], used[s.Name] = s, true
				break
			}
		}
	}
	n := 1
	for i, w := range want {
		if serving[i] != nil {
			continue
		}
		if j := slices.IndexFunc(have, func(s *corev1.Service) bool { return !used[s.Name] }); j >= 0 {
			serving[i], used[have[j].Name] = have[j], true
			continue
		}
		for ; used[vipServiceName(gw.Name, n)]; n++ {
		}
		name := vipServiceName(gw.Name, n)
		used[name] = true
		taken, exists := byName[types.NamespacedName{Namespace: w.Namespace, Name: name}]
		switch {
		case !exists:
			w.Name = name
			d.create = append(d.create, w)
		default:
			d.conflicts[gw] = fmt.Sprintf("Gateway %s: its VIP Service name %s/%s is taken by a Service that is not its own; rename that Service",
				gw, taken.Namespace, taken.Name)
		}
	}
	for i, s := range serving {
		if s == nil {
			continue
		}
		w := want[i]
		w.Name = s.Name
		if u := updateVIP(s, w); u != nil {
			d.update = append(d.update, u)
		} else {
			d.keep++
		}
	}
	for _, s := range have {
		if !used[s.Name] {
			d.delete = append(d.delete, s)
		}
	}
	d.serving[gw] = serving
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
