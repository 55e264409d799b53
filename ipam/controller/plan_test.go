package controller

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/ipam"
)

func ptr[T any](v T) *T { return &v }

func TestWantsVIP(t *testing.T) {
	lb := corev1.ServiceTypeLoadBalancer
	tests := map[string]struct {
		svc  corev1.Service
		want bool
	}{
		"our class": {corev1.Service{Spec: corev1.ServiceSpec{Type: lb, LoadBalancerClass: ptr(ipam.LoadBalancerClass)}}, true},
		"other class even with opt-in": {corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ipam.AnnotationEnabled: "true"}},
			Spec:       corev1.ServiceSpec{Type: lb, LoadBalancerClass: ptr("metallb.io/x")}}, false},
		"no class, opt-in": {corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ipam.AnnotationEnabled: "true"}},
			Spec:       corev1.ServiceSpec{Type: lb}}, true},
		"no class, no opt-in": {corev1.Service{Spec: corev1.ServiceSpec{Type: lb}}, false},
		"ClusterIP with class annotation": {corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ipam.AnnotationEnabled: "true"}},
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
		ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"other", Finalizer},
			Annotations: map[string]string{ipam.AnnotationAssignedPool: "p", ipam.AnnotationAssignedL4Cluster: "c", "user": "x"}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.5"}}}},
	}
	tests := map[string]struct {
		svc                  *corev1.Service
		plan                 servicePlan
		wantMeta, wantStatus bool
		check                func(t *testing.T, d serviceDiff)
	}{
		"fresh service gets everything": {svc: &corev1.Service{}, plan: planFor(al), wantMeta: true, wantStatus: true,
			check: func(t *testing.T, d serviceDiff) {
				if !slices.Contains(d.meta.Finalizers, Finalizer) || d.meta.Annotations[ipam.AnnotationAssignedPool] != "p" {
					t.Errorf("meta = %+v", d.meta.ObjectMeta)
				}
				if d.status.Status.LoadBalancer.Ingress[0].IP != "203.0.113.5" {
					t.Errorf("status = %+v", d.status.Status)
				}
			}},
		"in sync: no writes":     {svc: done, plan: planFor(al)},
		"moved VIP: status only": {svc: done, plan: planFor(ipam.Allocation{Address: netip.MustParseAddr("203.0.113.6"), Pool: "p", L4Cluster: "c"}), wantStatus: true},
		"leaving: everything of ours removed, nothing else": {svc: done, plan: planFor(ipam.Allocation{}), wantMeta: true, wantStatus: true,
			check: func(t *testing.T, d serviceDiff) {
				if !slices.Equal(d.meta.Finalizers, []string{"other"}) || d.meta.Annotations["user"] != "x" || len(d.meta.Annotations) != 1 {
					t.Errorf("meta = %+v", d.meta.ObjectMeta)
				}
				if len(d.status.Status.LoadBalancer.Ingress) != 0 {
					t.Errorf("ingress left: %+v", d.status.Status.LoadBalancer.Ingress)
				}
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.svc.DeepCopy()
			d := diffService(tc.svc, tc.plan)
			if (d.meta != nil) != tc.wantMeta || (d.status != nil) != tc.wantStatus {
				t.Fatalf("meta write %v status write %v; want %v %v", d.meta != nil, d.status != nil, tc.wantMeta, tc.wantStatus)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
			if tc.svc.Finalizers == nil && before.Finalizers != nil || len(tc.svc.Finalizers) != len(before.Finalizers) || len(tc.svc.Annotations) != len(before.Annotations) {
				t.Fatal("diffService changed the cached object")
			}
		})
	}
}
