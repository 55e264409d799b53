//go:build conformance

package gatewayconformance

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// checkPodLifecycle deletes one echo Pod of a Deployment and waits until
// the processes running are exactly the echo Pods the API server has
// (the deleted one's gone, its replacement's started) and the run's
// namespace holds one host veth per running Pod (a deleted Pod's
// namespace and veth pair went with its process).
func checkPodLifecycle(ctx context.Context, t *testing.T, cs kubernetes.Interface, pods *PodProcesses) {
	t.Helper()
	list, err := cs.CoreV1().Pods("gateway-conformance-infra").List(ctx, metav1.ListOptions{LabelSelector: "app=infra-backend-v1"})
	if err != nil || len(list.Items) == 0 {
		t.Errorf("pod lifecycle: the infra-backend-v1 Pods: %v (%d found)", err, len(list.Items))
		return
	}
	victim := list.Items[0]
	if err := cs.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("pod lifecycle: delete Pod %s/%s: %v", victim.Namespace, victim.Name, err)
		return
	}
	var last string
	err = waitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		want, err := echoPods(ctx, cs, pods)
		if err != nil {
			return false, err
		}
		got := pods.Running()
		slices.Sort(got)
		links, err := hostVeths()
		if err != nil {
			return false, err
		}
		last = fmt.Sprintf("API server's echo Pods %v, processes %v, host veths %d", want, got, links)
		return slices.Equal(want, got) && links == len(got) && !slices.Contains(got, victim.Namespace+"/"+victim.Name), nil
	})
	if err != nil {
		t.Errorf("pod lifecycle: after deleting Pod %s/%s: %v; last: %s", victim.Namespace, victim.Name, err, last)
		return
	}
	t.Logf("pod lifecycle: Pod %s/%s deleted; %s", victim.Namespace, victim.Name, last)
}

// echoPods are the Pods (namespace/name, sorted) with a container run here (echo server, DNS stand-in)
// container that are not being deleted.
func echoPods(ctx context.Context, cs kubernetes.Interface, pods *PodProcesses) ([]string, error) {
	list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return pods.simulated(c.Image) }) {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// hostVeths counts the run's namespace's network devices besides
// loopback: the host ends of the Pods' veth pairs.
func hostVeths() (int, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			n++
		}
	}
	return n, nil
}
