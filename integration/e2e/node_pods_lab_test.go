//go:build lab

package e2e_test

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/integration/topo"
)

// failedPods fails the test at once when a pod of selector has failed
// (the kubelet evicted it, say), with the kubelet's reason.
func failedPods(t *testing.T, kc kubernetes.Interface, selector string) {
	t.Helper()
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodFailed {
			t.Fatalf("pod %s on %s failed: %s: %s", p.Name, p.Spec.NodeName, p.Status.Reason, p.Status.Message)
		}
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyPods counts the Ready pods of selector in tlb-system (on node, when
// not "").
func readyPods(kc kubernetes.Interface, selector, node string) int {
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range pods.Items {
		if node != "" && p.Spec.NodeName != node {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

func podNames(kc kubernetes.Interface, selector string) []string {
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}

func restarts(kc kubernetes.Interface, selector string) int32 {
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return -1
	}
	var r int32
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			r += cs.RestartCount
		}
	}
	return r
}

// podTable is one line per pod of tlb-system: node, phase, conditions and
// container states.
func podTable(kc kubernetes.Interface) string {
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "%s node=%s phase=%s", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, c := range p.Status.Conditions {
			fmt.Fprintf(&b, " %s=%s(%s)", c.Type, c.Status, c.Message)
		}
		for _, cs := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, " [%s ready=%v restarts=%d state=%+v last=%+v]", cs.Name, cs.Ready, cs.RestartCount, cs.State, cs.LastTerminationState)
		}
		b.WriteString("\n")
	}
	evs, err := kc.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err == nil {
		for _, e := range evs.Items {
			if e.Type != corev1.EventTypeNormal {
				fmt.Fprintf(&b, "event %s/%s %s: %s\n", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
			}
		}
	}
	return b.String()
}

// vmMemory logs the VM's memory and its largest processes.
func vmMemory(t *testing.T, what string) {
	out, _ := exec.Command("sh", "-c", "free -m; ps -eo rss,comm --sort=-rss | head -8").CombinedOutput()
	t.Logf("%s:\n%s", what, out)
}

// readyz is the body of GET /readyz on addr inside node n.
func readyz(n *topo.Node, addr string) string {
	hc := n.HTTPClient()
	hc.Timeout = 5 * time.Second
	resp, err := hc.Get("http://" + addr + "/readyz")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status + " " + string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
