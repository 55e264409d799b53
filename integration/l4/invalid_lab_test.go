//go:build lab

package l4

import (
	"io"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/topo"
)

// gatewayState is what netd controls on a gateway, as the kernel reports it.
func gatewayState(t *testing.T, gw *topo.Node) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(gw.Run(t, "ip", "-o", "addr", "show", "dev", "tunl0"))
	b.WriteString(gw.Run(t, "nft", "list", "table", "inet", "tlb_netd"))
	for _, k := range []string{"all/arp_ignore", "all/arp_announce", "tunl0/arp_ignore", "tunl0/arp_announce", "tunl0/rp_filter"} {
		b.WriteString(k + "=" + gw.Run(t, "cat", "/proc/sys/net/ipv4/conf/"+k))
	}
	return b.String()
}

func metric(t *testing.T, gw *topo.Node, addr, name string) string {
	t.Helper()
	resp, err := gw.HTTPClient().Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			return f[1]
		}
	}
	return ""
}

// TestInvalidConfigChangesNothing is proof 6: an invalid netd file and an
// invalid director config file change nothing in the kernel, and netd and tlb keep
// running with the last valid state.
func TestInvalidConfigChangesNothing(t *testing.T) {
	l := newDSRLab(t, 1, 1)
	gw, dir := l.gateways[0], l.directors[0]
	nd := startNetd(t, gw, vip)
	waitFor(t, 30*time.Second, "netd metrics", func() bool { return metric(t, gw, nd.metrics, "netd_vips_bound") == "1" })
	before := gatewayState(t, gw)
	writesBefore := metric(t, gw, nd.metrics, "netd_kernel_writes_total")

	// Valid YAML shape, but an out-of-range MSS and a second VIP: if any of
	// it were applied the VIP set would change.
	writeFile(t, nd.config, "netd:\n  metricsAddress: "+nd.metrics+"\n  mss: 99999\nvips: [203.0.113.10, 203.0.113.11]\n")
	waitFor(t, 30*time.Second, "netd rejects the file", func() bool { return metric(t, gw, nd.metrics, "netd_config_errors_total") == "1" })
	writeFile(t, nd.config, "vips: [203.0.113.10, 203.0.113.11]\nunknownField: true\n")
	waitFor(t, 30*time.Second, "netd rejects the second file", func() bool { return metric(t, gw, nd.metrics, "netd_config_errors_total") == "2" })
	time.Sleep(3 * time.Second) // three resyncs with the last valid state
	if after := gatewayState(t, gw); after != before {
		t.Errorf("gateway state changed after invalid config files:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if nd.exited() {
		t.Fatal("netd exited on an invalid config file")
	}
	if w := metric(t, gw, nd.metrics, "netd_kernel_writes_total"); w != writesBefore {
		t.Errorf("netd made kernel writes while holding the last valid state: %s before, %s after", writesBefore, w)
	} else {
		t.Logf("netd kernel writes stayed at %s over the invalid files and the resyncs in between", w)
	}
	// It still follows valid changes.
	writeFile(t, nd.config, netdConfig(nd.metrics, vip, vip11))
	waitFor(t, 30*time.Second, "netd applies the next valid file", func() bool {
		return slices.Equal(boundVIPs(t, gw), []netip.Addr{vip, vip11})
	})

	// The director: the real tlb binary with a file that becomes invalid.
	tlbCfg := filepath.Join(t.TempDir(), "tlb.yaml")
	runtimeDir := t.TempDir()
	tlbFile := func(weight2 string) string {
		return "director:\n  metricsAddress: 127.0.0.1:9100\n  runtimeDir: " + runtimeDir + "\n  resyncInterval: 1s\n" +
			"services:\n  - vip: " + vip.String() + "\n    port: 80\n    realServers:\n" +
			"      - {address: " + l.gwAddrs[0].String() + ", weight: " + weight2 + "}\n"
	}
	writeFile(t, tlbCfg, tlbFile("1"))
	tlb := startProc(t, dir, "tlb", "run", "--config", tlbCfg)
	waitFor(t, 60*time.Second, "tlb programs the VIP", func() bool {
		return strings.Contains(dir.Run(t, "ipvsadm", "-Ln"), l.gwAddrs[0].String()+":80")
	})
	ipvsBefore := dir.Run(t, "ipvsadm", "-Ln")

	writeFile(t, tlbCfg, tlbFile("70000"))
	waitFor(t, 30*time.Second, "tlb rejects the file", func() bool {
		return metric(t, dir, "127.0.0.1:9100", "tlb_director_config_rejected_total") == "1"
	})
	time.Sleep(3 * time.Second) // three resyncs with the last valid state
	if got := dir.Run(t, "ipvsadm", "-Ln"); got != ipvsBefore {
		t.Errorf("IPVS changed after an invalid tlb config:\nbefore:\n%s\nafter:\n%s", ipvsBefore, got)
	}
	if tlb.exited() {
		t.Fatal("tlb run exited on an invalid config file")
	}
	writeFile(t, tlbCfg, tlbFile("2"))
	waitFor(t, 30*time.Second, "tlb applies the next valid file", func() bool {
		for _, line := range strings.Split(dir.Run(t, "ipvsadm", "-Ln"), "\n") {
			if f := strings.Fields(line); len(f) >= 4 && f[1] == l.gwAddrs[0].String()+":80" && f[3] == "2" {
				return true
			}
		}
		return false
	})
	t.Logf("director IPVS after the next valid file:\n%s", dir.Run(t, "ipvsadm", "-Ln"))
}
