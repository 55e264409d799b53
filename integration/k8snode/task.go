package k8snode

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// ContainerPID is the process ID, in the VM, of the main process of a
// running container of this node, found through containerd (ctr task ls
// in the kubelet's namespace k8s.io). containerID is the pod status's
// containerID, with or without its "containerd://" prefix.
func (n *Node) ContainerPID(ctx context.Context, containerID string) (int, error) {
	id := strings.TrimPrefix(containerID, "containerd://")
	out, err := exec.CommandContext(ctx, n.ctr, "--address", n.sock, "-n", "k8s.io", "tasks", "ls").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("node %s: ctr tasks ls: %w: %s", n.Name, err, out)
	}
	// TASK  PID  STATUS, one line per task.
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != id {
			continue
		}
		if f[2] != "RUNNING" {
			return 0, fmt.Errorf("node %s: container %s is %s", n.Name, id, f[2])
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil || pid <= 0 {
			return 0, fmt.Errorf("node %s: container %s: pid %q in %q", n.Name, id, f[1], line)
		}
		return pid, nil
	}
	return 0, fmt.Errorf("node %s: no task of container %s in:\n%s", n.Name, id, out)
}
