//go:build lab

package l4

import (
	"strings"
	"testing"
	"time"
)

// TestNetdIsIdempotentAndRepairsDrift: on the real kernel, netd's resyncs
// make no writes while the node is in sync, and repair what someone else
// changed (a VIP removed, the clamp table deleted, a sysctl reset).
func TestNetdIsIdempotentAndRepairsDrift(t *testing.T) {
	l := newDSRLab(t, 1, 1)
	gw := l.gateways[0]
	nd := startNetd(t, gw, vip)
	waitFor(t, 30*time.Second, "netd metrics", func() bool { return metric(t, gw, nd.metrics, "netd_vips_bound") == "1" })
	w0 := metric(t, gw, nd.metrics, "netd_kernel_writes_total")
	time.Sleep(3 * time.Second) // three resyncs
	if w := metric(t, gw, nd.metrics, "netd_kernel_writes_total"); w != w0 {
		t.Fatalf("netd wrote to the kernel while in sync: %s writes, then %s", w0, w)
	}
	t.Logf("in sync: kernel writes stayed at %s over three resyncs", w0)

	gw.Run(t, "ip", "addr", "del", vip.String()+"/32", "dev", "tunl0")
	gw.Run(t, "nft", "delete", "table", "inet", "tlb_netd")
	gw.Sysctl(t, "net/ipv4/conf/tunl0/rp_filter", "0")
	waitFor(t, 30*time.Second, "netd repairs the drift", func() bool {
		return len(boundVIPs(t, gw)) == 1 &&
			strings.Contains(gw.Run(t, "nft", "list", "ruleset"), "maxseg size set 1440") &&
			strings.TrimSpace(gw.Run(t, "cat", "/proc/sys/net/ipv4/conf/tunl0/rp_filter")) == "2"
	})
	t.Logf("repaired; kernel writes now %s", metric(t, gw, nd.metrics, "netd_kernel_writes_total"))
}
