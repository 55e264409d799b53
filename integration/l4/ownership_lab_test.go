//go:build lab

package l4

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/tlb/model"
)

var vip11 = netip.MustParseAddr("203.0.113.11")

// TestForeignStateSurvivesReconciles is proof 5: an IPVS service the
// director did not create, and an address and an nftables table on a
// gateway that netd did not create, survive reconciles of both.
func TestForeignStateSurvivesReconciles(t *testing.T) {
	l := newDSRLab(t, 1, 1)
	gw, dir := l.gateways[0], l.directors[0]
	nd := startNetd(t, gw, vip, vip11)

	// Foreign state on the gateway: an address on tunl0, an nftables table.
	gw.Run(t, "ip", "addr", "add", "198.51.100.77/32", "dev", "tunl0")
	gw.Run(t, "nft", "add table inet foreign; add chain inet foreign out { type filter hook output priority 0; }; add rule inet foreign out counter")

	// netd is told to stop serving .11: only its own address goes.
	writeFile(t, nd.config, netdConfig(nd.metrics, vip))
	waitFor(t, 30*time.Second, "netd unbinds "+vip11.String(), func() bool {
		return slices.Equal(boundVIPs(t, gw), []netip.Addr{vip})
	})
	time.Sleep(2 * time.Second) // two more resyncs
	if out := gw.Run(t, "ip", "-o", "addr", "show", "dev", "tunl0"); !strings.Contains(out, "198.51.100.77/32") {
		t.Errorf("foreign address on tunl0 removed by netd:\n%s", out)
	} else {
		t.Logf("tunl0 after netd reconciles:\n%s", out)
	}
	if out := gw.Run(t, "nft", "list", "table", "inet", "foreign"); !strings.Contains(out, "counter") {
		t.Errorf("foreign nftables table changed:\n%s", out)
	}

	// Foreign IPVS service on the director.
	dir.Run(t, "ipvsadm", "-A", "-t", "198.51.100.80:8080", "-s", "rr")
	dir.Run(t, "ipvsadm", "-a", "-t", "198.51.100.80:8080", "-r", "198.18.10.2:8080", "-i", "-w", "3")
	d, _ := newDirector(t, dir)
	reconcile(t, d, webService(l.gwAddrs, nil))
	reconcile(t, d, webService(l.gwAddrs, map[netip.Addr]int{l.gwAddrs[0]: 5}))
	reconcile(t, d, model.Desired{}) // the director's own service goes
	out := dir.Run(t, "ipvsadm", "-Ln")
	t.Logf("director IPVS after its reconciles:\n%s", out)
	if !strings.Contains(out, "198.51.100.80:8080 rr") || !strings.Contains(out, "198.18.10.2:8080") {
		t.Errorf("foreign IPVS service or its real server was touched:\n%s", out)
	}
	if strings.Contains(out, vip.String()+":80") {
		t.Errorf("the director's own service should be gone:\n%s", out)
	}
}
