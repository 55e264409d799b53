//go:build lab

package e2e_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/integration/k8snode"
)

// netdWithoutSysctlDir runs the netd DaemonSet as the manifests were
// before --sysctl-dir: netd writing the container's own /proc/sys, which
// containerd mounts read-only. The new pod on the gateway node (node) must
// not be Ready, and say why on /readyz and in its log. check fails the
// test when a node or the control plane has stopped.
func netdWithoutSysctlDir(t *testing.T, kc kubernetes.Interface, d *dc, node *k8snode.Node, check func()) {
	t.Helper()
	ctx := context.Background()
	gw := d.gateways[0]
	ds, err := kc.AppsV1().DaemonSets("tlb-system").Get(ctx, "tlb-netd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := ds.Spec.Template.Spec.Containers[0].Command
	var without []string
	for _, a := range cmd {
		if !strings.HasPrefix(a, "--sysctl-dir") {
			without = append(without, a)
		}
	}
	if len(without) == len(cmd) {
		t.Fatalf("the netd DaemonSet's command %q has no --sysctl-dir", cmd)
	}
	ds.Spec.Template.Spec.Containers[0].Command = without
	oldPods := podNames(kc, "app.kubernetes.io/name=tlb-netd")
	if _, err := kc.AppsV1().DaemonSets("tlb-system").Update(ctx, ds, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Until the old pod is gone altogether: while it terminates it would
	// still repair what the new one should find to do. Under TCG on a
	// loaded host containerd has taken minutes to delete a pod's tasks
	// (each delete past its 10 s deadline, retried with back-off).
	waitFor(t, 12*time.Minute, "the netd DaemonSet replaces its pod", func() bool {
		check()
		now := podNames(kc, "app.kubernetes.io/name=tlb-netd")
		return len(now) == 1 && !contains(oldPods, now[0])
	})
	// The old pod set the sysctls already; one drifts, so the new pod
	// has to write.
	gw.Sysctl(t, "net.ipv4.conf.all.arp_ignore", "0")
	var why string
	waitFor(t, 5*time.Minute, "a netd pod writing the container's /proc/sys says on /readyz that it is read-only", func() bool {
		check()
		why = readyz(gw, net.JoinHostPort(d.gatewayAddr[0], "9101"))
		return strings.Contains(why, "read-only file system") && strings.Contains(why, "--sysctl-dir")
	})
	t.Logf("netd without the host's /proc/sys/net: /readyz %q", why)
	waitFor(t, time.Minute, "that netd pod's log says why too", func() bool {
		return strings.Contains(node.PodLogs(), "read-only file system")
	})
	waitFor(t, time.Minute, "that netd pod is not Ready", func() bool {
		return readyPods(kc, "app.kubernetes.io/name=tlb-netd", gw.Name) == 0
	})
}
