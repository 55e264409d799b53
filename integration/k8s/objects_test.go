//go:build k8s

package k8s

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/poll"
)

// clients returns typed and dynamic clients for the shared server.
func clients(t *testing.T) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	kc, err := kubernetes.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	return kc, dc
}

func createObject(t *testing.T, dc dynamic.Interface, gvr schema.GroupVersionResource, obj any) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	if _, err := dc.Resource(gvr).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", gvr.Resource, u.GetName(), err)
	}
}

// createPool creates an L4Cluster (capacity 0: the default) and one VIPPool.
func createPool(t *testing.T, dc dynamic.Interface, cluster, env string, capacity int32, pool string, cidrs ...string) {
	t.Helper()
	createObject(t, dc, v1alpha1.L4ClusterResource, &v1alpha1.L4Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec:       v1alpha1.L4ClusterSpec{Environment: env, Capacity: capacity},
	})
	createObject(t, dc, v1alpha1.VIPPoolResource, &v1alpha1.VIPPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: pool},
		Spec:       v1alpha1.VIPPoolSpec{CIDRs: cidrs, L4Cluster: cluster},
	})
}

func ensureNamespace(t *testing.T, kc kubernetes.Interface, ns string) {
	t.Helper()
	_, err := kc.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// lbService is a LoadBalancer Service of class tlb.io/l4 with annotations.
func lbService(ns, name string, ann map[string]string) *corev1.Service {
	class := api.LoadBalancerClass
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec: corev1.ServiceSpec{
			Type:              corev1.ServiceTypeLoadBalancer,
			LoadBalancerClass: &class,
			Selector:          map[string]string{"app": name},
			Ports:             []corev1.ServicePort{{Name: "http", Port: 80}},
			// No node ports: the directors send traffic to gateways, not to
			// node ports.
			AllocateLoadBalancerNodePorts: new(false),
		},
	}
}

// vipOf returns the VIP in a Service's status.
func vipOf(svc *corev1.Service) (netip.Addr, bool) {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(in.IP); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Explained(t, timeout, what, cond)
}

// eventsFor lists the Events about one Service.
func eventsFor(t *testing.T, kc kubernetes.Interface, ns, name string) []corev1.Event {
	t.Helper()
	evs, err := kc.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Service,involvedObject.name=" + name,
	})
	if err != nil {
		t.Fatalf("list events of %s/%s: %v", ns, name, err)
	}
	return evs.Items
}

func hasEvent(evs []corev1.Event, reason, contains string) bool {
	for _, e := range evs {
		if e.Reason == reason && strings.Contains(e.Message, contains) {
			return true
		}
	}
	return false
}

func poolStatus(t *testing.T, dc dynamic.Interface, name string) v1alpha1.VIPPoolStatus {
	t.Helper()
	u, err := dc.Resource(v1alpha1.VIPPoolResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get VIPPool %s: %v", name, err)
	}
	var p v1alpha1.VIPPool
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
		t.Fatal(err)
	}
	return p.Status
}

// deleteServicesAtCleanup deletes every Service of ns when the test ends
// (while its controller still runs, so finalizers are honoured) and waits
// until they are gone, leaving a clean API server for the next test.
func deleteServicesAtCleanup(t *testing.T, kc kubernetes.Interface, ns string) {
	t.Cleanup(func() {
		ctx := context.Background()
		l, err := kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("list Services of %s: %v", ns, err)
			return
		}
		for _, s := range l.Items {
			if err := kc.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete Service %s/%s: %v", ns, s.Name, err)
			}
		}
		eventually(t, 120*time.Second, "Services of "+ns+" gone (finalizers released)", func() (bool, string) {
			l, err := kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(l.Items) == 0, fmt.Sprintf("%d left", len(l.Items))
		})
	})
}
