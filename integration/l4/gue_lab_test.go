//go:build lab

package l4

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

const guePort = 6080

// startNetdSettings starts the real netd binary in node with the given
// lines under `netd:` (indented by two spaces) serving vips, and waits
// until every VIP is bound.
func startNetdSettings(t *testing.T, node *topo.Node, settings string, vips ...netip.Addr) *netdProc {
	t.Helper()
	p := &netdProc{node: node, config: filepath.Join(t.TempDir(), "netd.yaml"), metrics: "127.0.0.1:9101"}
	var s []string
	for _, v := range vips {
		s = append(s, v.String())
	}
	writeFile(t, p.config, fmt.Sprintf("netd:\n  metricsAddress: %s\n  tunnel: tunl0\n%svips: [%s]\n", p.metrics, settings, strings.Join(s, ", ")))
	p.proc = startProc(t, node, "netd", "run", "--config", p.config, "--resync", "1s")
	waitFor(t, 60*time.Second, "netd binds "+fmt.Sprint(vips)+" in "+node.Name, func() bool {
		return slices.Equal(boundVIPs(t, node), vips)
	})
	return p
}

// newKernelDirector returns the real director driving kernel IPVS in
// node's namespace through director.Kernel, the handle that programs GUE.
func newKernelDirector(t *testing.T, node *topo.Node) (*director.Director, *director.Kernel) {
	t.Helper()
	k, err := director.OpenKernel(node.NsPath())
	if err != nil {
		t.Fatalf("open IPVS in %s: %v", node.Name, err)
	}
	t.Cleanup(k.Close)
	d, err := director.New(k, director.NetnsProcSys{NsPath: node.NsPath()}, slog.New(slog.NewTextHandler(io.Discard, nil)), director.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d, k
}

// clampMSS returns the MSS netd's clamp rule sets in node ("" when none).
func clampMSS(t *testing.T, node *topo.Node) string {
	t.Helper()
	out := node.Run(t, "nft", "list", "chain", "inet", "tlb_netd", "mss_clamp")
	if i := strings.Index(out, "maxseg size set "); i >= 0 {
		return strings.Fields(out[i+len("maxseg size set "):])[0]
	}
	return ""
}

// dropFragNeeded makes the router drop every ICMP "fragmentation needed",
// as a filtering hop (or a director the client's flow hashes away from)
// does: a segment too large for the tunnel is then lost for good.
func dropFragNeeded(t *testing.T, router *topo.Node) {
	t.Helper()
	router.Run(t, "nft", "add table inet lab; add chain inet lab icmpdrop { type filter hook forward priority 0; }; "+
		"add rule inet lab icmpdrop icmp type destination-unreachable icmp code 4 counter drop")
}

// TestGUEClusterSpreadsFlowsAndReturnsDirectly proves GUE end to end:
// the director (the real director package through director.Kernel)
// programs its real servers with tun_type gue and port 6080; netd on each
// gateway (the real binary, netd.gue.port 6080, mss auto) adds the FOU
// receiver and clamps for the 32-byte GUE overhead. A capture on a
// gateway's link shows every flow in its own outer UDP source port (the
// same port for all of a flow's packets); replies bypass the director;
// 1 and 8 MiB uploads and downloads arrive whole at MTU 1500 with ICMP
// frag-needed dropped.
func TestGUEClusterSpreadsFlowsAndReturnsDirectly(t *testing.T) {
	if out, err := exec.Command("modprobe", "fou").CombinedOutput(); err != nil {
		t.Fatalf("modprobe fou: %v\n%s", err, out)
	}
	l := newDSRLab(t, 1, 2)
	// The director takes the outer source port from the packet's flow
	// hash, which over veth is the client socket's own (sk_txhash). With
	// the default net.core.txrehash=1 a socket picks a new one on a
	// retransmission timeout (a SYN retransmitted on the slow lab VM), so
	// one flow would show two ports; a NIC computes the hash from the
	// 5-tuple instead. Keep the client's hash fixed.
	l.client.Sysctl(t, "net/core/txrehash", "0")
	for _, g := range l.gateways {
		l.netd = append(l.netd, startNetdSettings(t, g, fmt.Sprintf("  mss: auto\n  gue: {port: %d}\n", guePort), vip))
	}
	for _, g := range l.gateways {
		waitFor(t, 30*time.Second, "netd clamps "+g.Name+" for GUE", func() bool { return clampMSS(t, g) == "1428" })
		if out := g.Run(t, "ip", "fou", "show"); !strings.Contains(out, fmt.Sprintf("port %d gue", guePort)) {
			t.Fatalf("%s: ip fou show = %q, want a gue receiver on %d", g.Name, out, guePort)
		}
	}
	l.serveHTTP(t)
	d, k := newKernelDirector(t, l.directors[0])
	desired := webService(l.gwAddrs, nil)
	desired.Services[0].Encap = model.GUE(guePort)
	reconcile(t, d, desired)
	// ipvsadm (an independent reader of the kernel's netlink answers)
	// must see every real server in GUE to the port.
	listing := l.directors[0].Run(t, "ipvsadm", "-Ln", "--tun-info")
	t.Logf("director IPVS:\n%s", listing)
	for _, a := range l.gwAddrs {
		line := ""
		for _, x := range strings.Split(listing, "\n") {
			if strings.Contains(x, a.String()+":80") {
				line = x
			}
		}
		if !strings.Contains(line, "Tunnel") || !strings.Contains(strings.ToLower(line), "gue") || !strings.Contains(line, fmt.Sprint(guePort)) {
			t.Errorf("ipvsadm shows real server %s as %q, want a GUE tunnel to port %d", a, line, guePort)
		}
	}
	// Read back through the director's own listing: nothing to change.
	if res, err := d.ReconcileFull(t.Context(), desired); err != nil || res.Writes != 0 {
		t.Fatalf("full listing after programming GUE: %d writes, %v", res.Writes, err)
	}

	// Flows: each request is a new connection from a new source port.
	caps := make([]*capture, len(l.gateways))
	for i, g := range l.gateways {
		caps[i] = startCapture(t, g, uplink(t, g), guePort)
	}
	const flows = 40
	counts := map[string]int{}
	for range flows {
		counts[l.get(t, "/")]++
	}
	outer := map[uint16]bool{}               // outer UDP source ports
	perFlow := map[uint16]map[uint16]uint8{} // inner TCP source port -> outer UDP source port -> the TCP flags seen in it
	resets := 0
	for _, c := range caps {
		c.end()
		for _, p := range c.taken() {
			if p.proto != 17 || p.udpDst != guePort {
				continue
			}
			if p.gueNext != 4 {
				t.Fatalf("GUE packet carries protocol %d, want 4 (IPIP)", p.gueNext)
			}
			// A reset the client's kernel sends for a connection it no
			// longer has (a late retransmission from the slow VM's
			// gateway) leaves from no socket: it carries no socket hash,
			// and the director hashes its 5-tuple instead. A NIC hashes
			// every packet so; over veth only the socket's own do.
			if p.flags&tcpRST != 0 {
				resets++
				continue
			}
			outer[p.udpSrc] = true
			if perFlow[p.inner] == nil {
				perFlow[p.inner] = map[uint16]uint8{}
			}
			perFlow[p.inner][p.udpSrc] |= p.flags
		}
	}
	t.Logf("%d flows answered %v; captured %d flows in GUE with %d distinct outer UDP source ports (%d resets from the client left out)", flows, counts, len(perFlow), len(outer), resets)
	for _, g := range l.gateways {
		if counts[g.Name] == 0 {
			t.Errorf("gateway %s answered none of %d requests: %v", g.Name, flows, counts)
		}
	}
	if len(perFlow) < flows {
		t.Errorf("captured %d flows in GUE, want all %d", len(perFlow), flows)
	}
	for inner, ports := range perFlow {
		if len(ports) != 1 {
			t.Errorf("flow from client port %d used outer ports %v (each with the TCP flags of its packets): one flow must keep one outer port", inner, ports)
		}
	}
	if len(outer) < flows*9/10 {
		t.Errorf("%d flows used only %d distinct outer UDP source ports; GUE should spread them", len(perFlow), len(outer))
	}

	// Direct return: downloads do not cross the director.
	dirIf := l.dirIfs[0]
	rx0, tx0 := linkBytes(t, l.directors[0], dirIf)
	const size = 256 << 10
	served := 0
	for range 4 {
		served += len(l.get(t, fmt.Sprintf("/download?bytes=%d", size)))
	}
	rx1, tx1 := linkBytes(t, l.directors[0], dirIf)
	st := serviceStats(t, k.Handle, 80)
	dirBytes := (rx1 - rx0) + (tx1 - tx0)
	t.Logf("served %d bytes; director link moved %d bytes; IPVS in %d pkts, out %d pkts", served, dirBytes, st.PacketsIn, st.PacketsOut)
	if served != 4*size || st.PacketsIn == 0 || st.PacketsOut != 0 || dirBytes > uint64(served)/5 {
		t.Errorf("direct return broken: served %d of %d, IPVS in %d out %d, director link %d bytes", served, 4*size, st.PacketsIn, st.PacketsOut, dirBytes)
	}

	// Uploads and downloads at MTU 1500 with frag-needed dropped: the
	// clamp (1428 = 1500 - 32 - 40) keeps every segment inside the tunnel.
	dropFragNeeded(t, l.router)
	for _, n := range []int{1 << 20, 8 << 20} {
		if got := l.get(t, fmt.Sprintf("/download?bytes=%d", n)); len(got) != n {
			t.Fatalf("download of %d bytes: got %d", n, len(got))
		}
		began := time.Now()
		body, err := upload(l, n, 120*time.Second)
		if err != nil || !strings.HasSuffix(body, fmt.Sprint(n)) {
			t.Fatalf("upload of %d bytes through GUE: %q, %v", n, body, err)
		}
		t.Logf("%d bytes down and up through GUE whole (upload %s, answered %q)", n, time.Since(began).Round(time.Millisecond), body)
	}
	t.Logf("router dropped ICMP frag-needed: %s", strings.TrimSpace(l.router.Run(t, "nft", "list", "chain", "inet", "lab", "icmpdrop")))
}
