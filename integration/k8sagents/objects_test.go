//go:build k8s

package k8sagents

import (
	"context"
	"log/slog"
	"os"
	"sync"
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
	"k8s.io/client-go/rest"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/poll"
)

func clientsFor(t *testing.T, cfg *rest.Config) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kc, dc
}

func testLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func createObject(t *testing.T, dc dynamic.Interface, gvr schema.GroupVersionResource, kind string, obj any) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(v1alpha1.SchemeGroupVersion.String())
	u.SetKind(kind)
	if _, err := dc.Resource(gvr).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", kind, u.GetName(), err)
	}
}

// createCluster creates an L4Cluster in environment env, labelled with a
// gateway group unless group is "", and one VIPPool per CIDR list.
func createCluster(t *testing.T, dc dynamic.Interface, name, env, group string, pools map[string][]string) {
	t.Helper()
	c := &v1alpha1.L4Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.L4ClusterSpec{Environment: env}}
	if group != "" {
		c.Labels = map[string]string{api.LabelGatewayGroup: group}
	}
	createObject(t, dc, v1alpha1.L4ClusterResource, "L4Cluster", c)
	for pool, cidrs := range pools {
		createObject(t, dc, v1alpha1.VIPPoolResource, "VIPPool", &v1alpha1.VIPPool{
			ObjectMeta: metav1.ObjectMeta{Name: pool},
			Spec:       v1alpha1.VIPPoolSpec{L4Cluster: name, CIDRs: cidrs},
		})
	}
}

// createNode creates a Node with labels and sets its status: one
// InternalIP and a Ready condition, as a kubelet would.
func createNode(t *testing.T, kc kubernetes.Interface, name, ip string, ready bool, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	n, err := kc.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}
	n.Status.Conditions = []corev1.NodeCondition{readyCondition(ready)}
	if _, err := kc.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set the status of node %s: %v", name, err)
	}
}

func readyCondition(ready bool) corev1.NodeCondition {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	now := metav1.NewTime(time.Now())
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: st, Reason: "Test", LastHeartbeatTime: now, LastTransitionTime: now}
}

func setReady(t *testing.T, kc kubernetes.Interface, name string, ready bool) {
	t.Helper()
	ctx := context.Background()
	n, err := kc.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{readyCondition(ready)}
	if _, err := kc.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set node %s ready=%v: %v", name, ready, err)
	}
}

func ensureNamespace(t *testing.T, kc kubernetes.Interface, ns string) {
	t.Helper()
	_, err := kc.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// lbService is a Service of class tlb.io/l4 asking for one VIP.
func lbService(ns, name, vip string, ports ...corev1.ServicePort) *corev1.Service {
	class := api.LoadBalancerClass
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{api.AnnotationVIP: vip}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class,
			Selector: map[string]string{"app": name}, Ports: ports,
			AllocateLoadBalancerNodePorts: new(false),
		},
	}
}

func svcPort(name string, port int32, proto corev1.Protocol) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, Protocol: proto}
}

// createWithStatus creates svc and writes, as the ipam controller would,
// its assignment annotation and the VIP in its status.
func createWithStatus(t *testing.T, kc kubernetes.Interface, svc *corev1.Service, cluster, vip string) {
	t.Helper()
	ctx := context.Background()
	if svc.Annotations == nil {
		svc.Annotations = map[string]string{}
	}
	svc.Annotations[api.AnnotationAssignedL4Cluster] = cluster
	out, err := kc.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Service %s/%s: %v", svc.Namespace, svc.Name, err)
	}
	out.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip}}
	if _, err := kc.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write the status of Service %s/%s: %v", svc.Namespace, svc.Name, err)
	}
}

// recorder keeps every model a source emitted.
type recorder[T any] struct {
	mu     sync.Mutex
	models []T
}

func (r *recorder[T]) emit(m T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.models = append(r.models, m)
}

func (r *recorder[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.models...)
}

// last returns the latest model, false before the first.
func (r *recorder[T]) last() (T, bool) {
	all := r.all()
	if len(all) == 0 {
		var zero T
		return zero, false
	}
	return all[len(all)-1], true
}

// runSource runs a source's Run until the end of the test.
func runSource[T any](t *testing.T, run func(context.Context, func(T)) error) *recorder[T] {
	t.Helper()
	rec := &recorder[T]{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, rec.emit) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("source Run: %v", err)
		}
	})
	return rec
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Explained(t, timeout, what, cond)
}
