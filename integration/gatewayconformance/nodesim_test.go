//go:build conformance

package gatewayconformance

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// TestNodeSimulator: against a real API server, the simulator registers a
// Ready node, binds a new Pod to it, reports it Running and Ready with an
// IP of its range, and finishes a graceful deletion.
func TestNodeSimulator(t *testing.T) {
	srv, err := apiserver.Start(3 * time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	sim := NewNodeSim(cs, "sim-1", netip.MustParsePrefix("10.244.0.0/16"), log, time.Now)
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()

	// No kube-controller-manager here: make the service account the
	// ServiceAccount admission plugin asks for.
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := waitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, "sim-1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("node sim-1 never Ready: %v", err)
	}

	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			Containers:                   []corev1.Container{{Name: "echo", Image: "example.invalid/echo:1"}},
		},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	if err := waitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "echo", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return podReady(p), nil
	}); err != nil {
		t.Fatalf("pod default/echo never Ready: %v (last: %+v)", err, got.Status)
	}
	if got.Spec.NodeName != "sim-1" || got.Status.Phase != corev1.PodRunning {
		t.Errorf("pod default/echo: node %q phase %q, want sim-1, Running", got.Spec.NodeName, got.Status.Phase)
	}
	if ip, err := netip.ParseAddr(got.Status.PodIP); err != nil || !netip.MustParsePrefix("10.244.0.0/16").Contains(ip) {
		t.Errorf("pod default/echo: IP %q, want one of 10.244.0.0/16", got.Status.PodIP)
	}
	if len(got.Status.ContainerStatuses) != 1 || !got.Status.ContainerStatuses[0].Ready {
		t.Errorf("pod default/echo: container statuses %+v, want echo ready", got.Status.ContainerStatuses)
	}

	grace := int64(30)
	if err := cs.CoreV1().Pods("default").Delete(ctx, "echo", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, 20*time.Second, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods("default").Get(ctx, "echo", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Errorf("pod default/echo still there 20 s after a graceful delete (30 s grace): %v", err)
	}
	select {
	case err := <-done:
		t.Errorf("the simulator stopped: %v", err)
	default:
	}
}
