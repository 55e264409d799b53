package controller

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/poll"
)

// TestInvalidPoolAtStartMovesNoVIP is the reproduction on fake
// clients (the proof against the real API server is
// TestInvalidPoolNeverDuplicatesOrMovesVIPs in integration/k8s): the controller starts while VIPPool "bad" names a
// missing L4Cluster, with Services holding VIPs of the good pool, of the
// bad pool, and a Service of another load balancer holding an address of
// the good pool. Nothing is written while the configuration is invalid;
// once it is fixed, new Services get addresses nobody holds and the
// holders keep theirs.
func TestInvalidPoolAtStartMovesNoVIP(t *testing.T) {
	class, other := api.LoadBalancerClass, "example.com/other"
	svc := func(name, class, vip string, ann map[string]string) *corev1.Service {
		s := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: ann},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class},
		}
		if vip != "" {
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip}}
		}
		return s
	}
	held := map[string]string{"old-good": "203.0.113.0", "old-bad": "198.51.100.1", "foreign": "203.0.113.1"}
	kc := fake.NewClientset(
		svc("old-good", class, held["old-good"], map[string]string{api.AnnotationEnvironment: "prod", api.AnnotationAssignedPool: "good", api.AnnotationAssignedL4Cluster: "c"}),
		svc("old-bad", class, held["old-bad"], map[string]string{api.AnnotationEnvironment: "other", api.AnnotationAssignedPool: "bad", api.AnnotationAssignedL4Cluster: "missing"}),
		svc("foreign", other, held["foreign"], nil),
	)
	dc := fakePools(t, pool("good", "c", "203.0.113.0/29"), pool("bad", "missing", "198.51.100.0/29"))
	c, ctx := runController(t, Options{Client: kc, Dynamic: dc})
	svcs := kc.CoreV1().Services("ns")
	if _, err := svcs.Create(ctx, svc("new-1", class, "", map[string]string{api.AnnotationEnvironment: "prod"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	noPool, kept := c.metrics.rejections.WithLabelValues(ReasonNoPool), c.metrics.rejections.WithLabelValues(ReasonPoolNotLoaded)
	poll.Explained(t, 10*time.Second, "old-good and old-bad kept, new-1 refused while the pools are invalid", func() (bool, string) {
		n, k := counter(t, noPool), counter(t, kept)
		return n >= 1 && k >= 2, fmt.Sprintf("%v NoMatchingPool, %v VIPPoolNotLoaded", n, k)
	})
	for _, a := range kc.Actions() {
		if a.GetResource().Resource == "services" && a.GetVerb() == "update" {
			t.Fatalf("Service written while the pools are invalid: %v", a)
		}
	}

	// Fix the configuration: the missing L4Cluster appears.
	if _, err := dc.Resource(v1alpha1.L4ClusterResource).Create(ctx, unstr(t, &v1alpha1.L4Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "missing"}, Spec: v1alpha1.L4ClusterSpec{Environment: "other"},
	}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the fixed configuration is loaded", func() bool { return gauge(t, c.metrics.configValid) == 1 })
	if _, err := svcs.Create(ctx, svc("new-2", class, "", map[string]string{api.AnnotationEnvironment: "prod"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"new-1": "203.0.113.2", "new-2": "203.0.113.3"}
	for name, vip := range held {
		want[name] = vip
	}
	poll.Explained(t, 10*time.Second, "new Services allocated, holders unchanged", func() (bool, string) {
		got, owner := map[string]string{}, map[string]string{}
		for name := range want {
			s, err := svcs.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if len(s.Status.LoadBalancer.Ingress) > 0 {
				ip := s.Status.LoadBalancer.Ingress[0].IP
				if prev, dup := owner[ip]; dup {
					t.Fatalf("VIP %s held by both %s and %s", ip, prev, name)
				}
				got[name], owner[ip] = ip, name
			}
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("VIPs %v, want %v", got, want)
	})
}
