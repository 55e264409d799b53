package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
)

// Builders of API objects for table tests.

func l4(name, group string) v1alpha1.L4Cluster {
	c := v1alpha1.L4Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.L4ClusterSpec{Environment: "prod"}}
	if group != "" {
		c.Labels = map[string]string{api.LabelGatewayGroup: group}
	}
	return c
}

func pool(name, cluster string, cidrs ...string) v1alpha1.VIPPool {
	return v1alpha1.VIPPool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.VIPPoolSpec{L4Cluster: cluster, CIDRs: cidrs}}
}

func gw(name, ip string, ready bool, group string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{api.LabelGateway: "true"}}}
	if group != "" {
		n.Labels[api.LabelGatewayGroup] = group
	}
	if ip != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
	return n
}

// svc is a TLB Service assigned to cluster with VIPs in status; age orders
// creation (higher is older).
func svc(ns, name, cluster string, age int, vips []string, ports ...corev1.ServicePort) *corev1.Service {
	class := api.LoadBalancerClass
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(age) * time.Hour)),
			Annotations:       map[string]string{api.AnnotationAssignedL4Cluster: cluster, api.AnnotationAssignedPool: "p"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class, Ports: ports},
	}
	for _, v := range vips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: v})
	}
	return s
}

func port(p int32, proto corev1.Protocol) corev1.ServicePort {
	return corev1.ServicePort{Port: p, Protocol: proto}
}
