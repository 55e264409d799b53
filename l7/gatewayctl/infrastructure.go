package gatewayctl

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// annotationInfrastructureKeys records, on a VIP Service, the label and
// annotation keys the controller copied from its Gateway's
// spec.infrastructure ("label:k,annotation:k", sorted), so that a key the
// Gateway drops is removed and keys others set are left alone.
const annotationInfrastructureKeys = "tlb.io/infrastructure-keys"

// withInfrastructure adds to the desired VIP Service of gw the label
// gateway.networking.k8s.io/gateway-name (the spec's label for what an
// implementation creates for a Gateway; left out when the name is too
// long for a label value) and spec.infrastructure's labels and
// annotations, except keys of tlb.io, which the controller and the IPAM
// own; the keys copied are recorded in annotationInfrastructureKeys.
func withInfrastructure(svc *corev1.Service, gw *gatewayv1.Gateway) {
	if len(validation.IsValidLabelValue(gw.Name)) == 0 {
		svc.Labels[gatewayv1.GatewayNameLabelKey] = gw.Name
	}
	inf := gw.Spec.Infrastructure
	if inf == nil {
		return
	}
	var keys []string
	for k, v := range inf.Labels {
		if key := string(k); !ownKey(key) {
			svc.Labels[key] = string(v)
			keys = append(keys, "label:"+key)
		}
	}
	for k, v := range inf.Annotations {
		if key := string(k); !ownKey(key) {
			svc.Annotations[key] = string(v)
			keys = append(keys, "annotation:"+key)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		svc.Annotations[annotationInfrastructureKeys] = strings.Join(keys, ",")
	}
}

// ownKey reports whether a label or annotation key is one that
// spec.infrastructure may not set on a VIP Service.
func ownKey(k string) bool {
	return strings.HasPrefix(k, "tlb.io/") || strings.Contains(k, ".tlb.io/")
}

// infrastructureKeys are the label and annotation keys (by kind "label"
// or "annotation") recorded on a VIP Service.
func infrastructureKeys(s *corev1.Service) map[string][]string {
	out := map[string][]string{}
	for e := range strings.SplitSeq(s.Annotations[annotationInfrastructureKeys], ",") {
		if kind, key, ok := strings.Cut(e, ":"); ok {
			out[kind] = append(out[kind], key)
		}
	}
	return out
}

// infrastructureDiff returns the labels and annotations cur must get
// (value) or lose (absent from want: nil) to carry want's infrastructure
// metadata: the keys want sets and the keys cur recorded. It is empty
// when cur has them already.
func infrastructureDiff(cur, want *corev1.Service) (labels, annotations map[string]*string) {
	labels, annotations = map[string]*string{}, map[string]*string{}
	diff := func(out map[string]*string, keys []string, curM, wantM map[string]string) {
		for _, k := range keys {
			wv, wok := wantM[k]
			cv, cok := curM[k]
			switch {
			case wok && (!cok || cv != wv):
				out[k] = &wv
			case !wok && cok:
				out[k] = nil
			}
		}
	}
	oldKeys, newKeys := infrastructureKeys(cur), infrastructureKeys(want)
	labelKeys := slices.Concat(oldKeys["label"], newKeys["label"], []string{gatewayv1.GatewayNameLabelKey})
	annKeys := slices.Concat(oldKeys["annotation"], newKeys["annotation"], []string{annotationInfrastructureKeys})
	diff(labels, labelKeys, cur.Labels, want.Labels)
	diff(annotations, annKeys, cur.Annotations, want.Annotations)
	return labels, annotations
}

// applyInfrastructure sets on w (a copy of cur) what infrastructureDiff
// says.
func applyInfrastructure(w, cur, want *corev1.Service) {
	labels, annotations := infrastructureDiff(cur, want)
	apply := func(m map[string]string, d map[string]*string) {
		for _, k := range slices.Sorted(maps.Keys(d)) {
			if v := d[k]; v != nil {
				m[k] = *v
			} else {
				delete(m, k)
			}
		}
	}
	apply(w.Labels, labels)
	apply(w.Annotations, annotations)
}

// sameInfrastructure reports whether cur carries want's infrastructure
// metadata.
func sameInfrastructure(cur, want *corev1.Service) bool {
	labels, annotations := infrastructureDiff(cur, want)
	return len(labels)+len(annotations) == 0
}
