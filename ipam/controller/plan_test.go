package controller

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/ipam"
)

func ptr[T any](v T) *T { return &v }

func TestWantsVIP(t *testing.T) {
	lb := corev1.ServiceTypeLoadBalancer
	tests := map[string]struct {
		svc  corev1.Service
		want bool
	}{
		"our class": {corev1.Service{Spec: corev1.ServiceSpec{Type: lb, LoadBalancerClass: ptr(api.LoadBalancerClass)}}, true},
		"other class even with opt-in": {corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{api.AnnotationEnabled: "true"}},
			Spec:       corev1.ServiceSpec{Type: lb, LoadBalancerClass: ptr("metallb.io/x")}}, false},
		"no class, opt-in": {corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{api.AnnotationEnabled: "true"}},
			Spec:       corev1.ServiceSpec{Type: lb}}, true},
		"no class, no opt-in": {corev1.Service{Spec: corev1.ServiceSpec{Type: lb}}, false},
		"ClusterIP with class annotation": {corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{api.AnnotationEnabled: "true"}},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := wantsVIP(&tc.svc); got != tc.want {
				t.Fatalf("wantsVIP = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDiffService(t *testing.T) {
	al := ipam.Allocation{Address: netip.MustParseAddr("203.0.113.5"), Pool: "p", L4Cluster: "c"}
	done := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"other"},
			Annotations: map[string]string{api.AnnotationAssignedPool: "p", api.AnnotationAssignedL4Cluster: "c", "user": "x"}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.5", IPMode: new(corev1.LoadBalancerIPModeProxy)}}}},
	}
	legacy := done.DeepCopy()
	legacy.Finalizers = append(legacy.Finalizers, LegacyFinalizer)
	// Written by an earlier version: ipMode VIP, or none (read as VIP).
	vipMode, unsetMode := done.DeepCopy(), done.DeepCopy()
	vipMode.Status.LoadBalancer.Ingress[0].IPMode = new(corev1.LoadBalancerIPModeVIP)
	unsetMode.Status.LoadBalancer.Ingress[0].IPMode = nil
	proxyMode := func(t *testing.T, w *corev1.Service) {
		in := w.Status.LoadBalancer.Ingress
		if len(in) != 1 || in[0].IP != "203.0.113.5" || in[0].IPMode == nil || *in[0].IPMode != corev1.LoadBalancerIPModeProxy {
			t.Errorf("ingress = %+v; want 203.0.113.5 with ipMode Proxy", in)
		}
	}
	tests := map[string]struct {
		svc       *corev1.Service
		plan      servicePlan
		wantWrite bool
		check     func(t *testing.T, w *corev1.Service)
	}{
		"fresh service: one write with VIP and annotations": {svc: &corev1.Service{}, plan: planFor([]ipam.Allocation{al}), wantWrite: true,
			check: func(t *testing.T, w *corev1.Service) {
				if w.Annotations[api.AnnotationAssignedPool] != "p" || w.Annotations[api.AnnotationAssignedL4Cluster] != "c" || len(w.Finalizers) != 0 {
					t.Errorf("meta = %+v", w.ObjectMeta)
				}
				proxyMode(t, w)
			}},
		"in sync: no write": {svc: done, plan: planFor([]ipam.Allocation{al})},
		"ipMode VIP of an earlier version: rewritten as Proxy": {svc: vipMode, plan: planFor([]ipam.Allocation{al}), wantWrite: true, check: proxyMode},
		"ipMode unset: written as Proxy":                       {svc: unsetMode, plan: planFor([]ipam.Allocation{al}), wantWrite: true, check: proxyMode},
		"legacy finalizer: removed, the rest kept": {svc: legacy, plan: planFor([]ipam.Allocation{al}), wantWrite: true,
			check: func(t *testing.T, w *corev1.Service) {
				if !slices.Equal(w.Finalizers, []string{"other"}) || w.Status.LoadBalancer.Ingress[0].IP != "203.0.113.5" || w.Annotations[api.AnnotationAssignedPool] != "p" {
					t.Errorf("write = %+v %+v", w.ObjectMeta, w.Status)
				}
			}},
		"moved VIP": {svc: done, plan: planFor([]ipam.Allocation{{Address: netip.MustParseAddr("203.0.113.6"), Pool: "p", L4Cluster: "c"}}), wantWrite: true,
			check: func(t *testing.T, w *corev1.Service) {
				if w.Status.LoadBalancer.Ingress[0].IP != "203.0.113.6" {
					t.Errorf("status = %+v", w.Status)
				}
			}},
		"leaving: everything of ours removed, nothing else": {svc: legacy, plan: planFor(nil), wantWrite: true,
			check: func(t *testing.T, w *corev1.Service) {
				if !slices.Equal(w.Finalizers, []string{"other"}) || w.Annotations["user"] != "x" || len(w.Annotations) != 1 {
					t.Errorf("meta = %+v", w.ObjectMeta)
				}
				if len(w.Status.LoadBalancer.Ingress) != 0 {
					t.Errorf("ingress left: %+v", w.Status.LoadBalancer.Ingress)
				}
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.svc.DeepCopy()
			w := diffService(tc.svc, tc.plan)
			if (w != nil) != tc.wantWrite {
				t.Fatalf("write %v, want %v", w != nil, tc.wantWrite)
			}
			if tc.check != nil {
				tc.check(t, w)
			}
			if !slices.Equal(tc.svc.Finalizers, before.Finalizers) || len(tc.svc.Annotations) != len(before.Annotations) {
				t.Fatal("diffService changed the cached object")
			}
		})
	}
}
