//go:build lab

package topo

import (
	"strings"
	"testing"
)

// TestLabKernelHasIPVSAndTunnelsPerNode checks, on the lab kernel, what the
// host kernel lacks: each node gets its own IPVS table and its own tunl0.
func TestLabKernelHasIPVSAndTunnelsPerNode(t *testing.T) {
	requireRoot(t)
	lab := New(t)
	a, b := lab.Node("a"), lab.Node("b")
	a.Run(t, "ipvsadm", "-A", "-t", "203.0.113.1:80", "-s", "mh", "-b", "flag-1,flag-2")
	if out := a.Run(t, "ipvsadm", "-Ln"); !strings.Contains(out, "203.0.113.1:80 mh") {
		t.Errorf("node a's IPVS table lacks the service:\n%s", out)
	}
	if out := b.Run(t, "ipvsadm", "-Ln"); strings.Contains(out, "203.0.113.1") {
		t.Errorf("node b sees node a's IPVS service:\n%s", out)
	}
	b.Run(t, "ip", "link", "set", "tunl0", "up")
	if out := b.Run(t, "ip", "-br", "link", "show", "tunl0"); !strings.Contains(out, "UP") && !strings.Contains(out, "UNKNOWN") {
		t.Errorf("tunl0 in node b not up: %s", out)
	}
}
