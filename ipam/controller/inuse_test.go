package controller

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/internal/poll"
)

// TestInUseVIPRetriedWhenFreed: a Service asking for an address another
// holds is refused (InUse); when the holder goes, the address is free and
// the waiting Service gets it. It used to wait for a change of its own
// (a Gateway's VIP Service never got its requested address back).
func TestInUseVIPRetriedWhenFreed(t *testing.T) {
	class := api.LoadBalancerClass
	svc := func(name string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{
				api.AnnotationEnvironment: "prod", api.AnnotationVIP: "203.0.113.1"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class},
		}
	}
	kc := fake.NewClientset(svc("holder"))
	dc := fakePools(t, pool("p", "c", "203.0.113.0/30"))
	c, ctx := runController(t, Options{Client: kc, Dynamic: dc})

	vip := func(name string) string {
		got, err := kc.CoreV1().Services("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(got.Status.LoadBalancer.Ingress) == 0 {
			return ""
		}
		return got.Status.LoadBalancer.Ingress[0].IP
	}
	poll.Explained(t, 10*time.Second, "holder has 203.0.113.1", func() (bool, string) { return vip("holder") == "203.0.113.1", vip("holder") })
	if _, err := kc.CoreV1().Services("ns").Create(ctx, svc("waiter"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "waiter is refused", func() bool { return counter(t, c.metrics.rejections.WithLabelValues(ReasonInUse)) > 0 })
	if err := kc.CoreV1().Services("ns").Delete(ctx, "holder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Explained(t, 10*time.Second, "waiter gets 203.0.113.1 once holder is gone", func() (bool, string) {
		return vip("waiter") == "203.0.113.1", fmt.Sprintf("waiter has %q", vip("waiter"))
	})
}
