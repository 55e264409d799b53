package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
)

// svc is a TLB Service assigned to cluster with VIPs in status; age orders
// creation (higher is older).
func svc(ns, name, cluster string, age int, vips []string) *corev1.Service {
	class := api.LoadBalancerClass
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(age) * time.Hour)),
			Annotations:       map[string]string{api.AnnotationAssignedL4Cluster: cluster, api.AnnotationAssignedPool: "p"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class},
	}
	for _, v := range vips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: v})
	}
	return s
}
