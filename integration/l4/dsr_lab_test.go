//go:build lab

package l4

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/ipvs"
	"github.com/vishvananda/netlink"

	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/internal/poll"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

var vip = netip.MustParseAddr("203.0.113.10")

// dsrLab is the data-path topology of the issue:
//
//	client -- router -- director(s)
//	            |
//	            +-- gateway1, gateway2, ... (netd, HTTP servers on the VIP)
//
// The router sends the VIP's traffic to the first director, which
// tunnels it (IPVS, IPIP) to the gateways; the gateways answer the client
// directly through the router.
type dsrLab struct {
	lab       *topo.Lab
	client    *topo.Node
	router    *topo.Node
	directors []*topo.Node
	dirIfs    []string // each director's interface towards the router
	gateways  []*topo.Node
	gwAddrs   []netip.Addr
	netd      []*netdProc
}

func binDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("TLB_BIN_DIR")
	if d == "" {
		t.Fatal("TLB_BIN_DIR is not set; run lab tests with ./tools/lab-test.sh")
	}
	return d
}

func newDSRLab(t *testing.T, nDirectors, nGateways int) *dsrLab {
	t.Helper()
	l := &dsrLab{lab: topo.New(t)}
	l.client = l.lab.Node("client")
	l.router = l.lab.Node("router")
	_, _ = l.lab.Link(l.client, l.router, "198.18.0.2/24", "198.18.0.1/24")
	l.client.AddRoute(t, "default", "198.18.0.1")
	for k := range nDirectors {
		d := l.lab.Node(fmt.Sprintf("dir%d", k+1))
		_, dIf := l.lab.Link(l.router, d, fmt.Sprintf("198.18.%d.1/24", 1+k), fmt.Sprintf("198.18.%d.2/24", 1+k))
		d.AddRoute(t, "default", fmt.Sprintf("198.18.%d.1", 1+k))
		d.Run(t, "ip", "link", "add", "vip0", "type", "dummy")
		d.Run(t, "ip", "addr", "add", vip.String()+"/32", "dev", "vip0")
		d.Run(t, "ip", "link", "set", "vip0", "up")
		l.directors = append(l.directors, d)
		l.dirIfs = append(l.dirIfs, dIf)
	}
	for i := range nGateways {
		g := l.lab.Node(fmt.Sprintf("gw%d", i+1))
		_, _ = l.lab.Link(l.router, g, fmt.Sprintf("198.18.%d.1/24", 10+i), fmt.Sprintf("198.18.%d.2/24", 10+i))
		g.AddRoute(t, "default", fmt.Sprintf("198.18.%d.1", 10+i))
		l.gateways = append(l.gateways, g)
		l.gwAddrs = append(l.gwAddrs, netip.MustParseAddr(fmt.Sprintf("198.18.%d.2", 10+i)))
	}
	l.router.AddRoute(t, "203.0.113.0/24", "198.18.1.2")
	l.router.Sysctl(t, "net/ipv4/ip_forward", "1")
	// Replies come from the VIP on a gateway's link while the route to the
	// VIP points at a director: the router must not check reverse paths.
	links, err := l.router.Netlink().LinkList()
	if err != nil {
		t.Fatal(err)
	}
	l.router.Sysctl(t, "net/ipv4/conf/all/rp_filter", "0")
	for _, lk := range links {
		l.router.Sysctl(t, "net/ipv4/conf/"+lk.Attrs().Name+"/rp_filter", "0")
	}
	return l
}

// proc is a binary running in a node, owned by the test: its output goes
// to the test log and cleanup kills it and waits for it.
type proc struct {
	done chan struct{}
	kill func()
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop kills the process and waits until it is gone.
func (p *proc) stop() { p.kill(); <-p.done }

func startProc(t *testing.T, node *topo.Node, name string, args ...string) *proc {
	t.Helper()
	cmd := node.Cmd(filepath.Join(binDir(t), name), args...)
	w := &testLog{t: t, prefix: node.Name + "/" + name + ": "}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s in %s: %v", name, node.Name, err)
	}
	p := &proc{done: make(chan struct{}), kill: func() { _ = cmd.Process.Kill() }}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	return p
}

// testLog writes a process's output lines to the test log.
type testLog struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
}

func (w *testLog) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		w.t.Log(w.prefix + line)
	}
	return len(b), nil
}

// netdProc is a netd binary running in a gateway node.
type netdProc struct {
	*proc
	node    *topo.Node
	config  string
	metrics string
}

func netdConfig(metrics string, vips ...netip.Addr) string {
	var s []string
	for _, v := range vips {
		s = append(s, v.String())
	}
	return fmt.Sprintf("netd:\n  metricsAddress: %s\n  tunnel: tunl0\n  mss: 1440\nvips: [%s]\n", metrics, strings.Join(s, ", "))
}

// startNetd writes a config serving vips and starts the real netd binary
// in node, then waits until every VIP is bound with netd's label.
func startNetd(t *testing.T, node *topo.Node, vips ...netip.Addr) *netdProc {
	t.Helper()
	return startNetdWith(t, node, "", vips...)
}

// startNetdWith is startNetd with extra YAML (e.g. a ports: section)
// appended to the config.
func startNetdWith(t *testing.T, node *topo.Node, extra string, vips ...netip.Addr) *netdProc {
	t.Helper()
	dir := t.TempDir()
	p := &netdProc{node: node, config: filepath.Join(dir, "netd.yaml"), metrics: "127.0.0.1:9101"}
	writeFile(t, p.config, netdConfig(p.metrics, vips...)+extra)
	p.proc = startProc(t, node, "netd", "run", "--config", p.config, "--resync", "1s")
	waitFor(t, 60*time.Second, "netd binds "+fmt.Sprint(vips)+" in "+node.Name, func() bool {
		return slices.Equal(boundVIPs(t, node), vips)
	})
	return p
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// boundVIPs lists the /32 addresses on tunl0 that carry netd's label.
func boundVIPs(t *testing.T, node *topo.Node) []netip.Addr {
	t.Helper()
	var out []netip.Addr
	for _, a := range tunnelAddrs(t, node) {
		if a.Label == "tunl0:tlb" {
			ip, _ := netip.AddrFromSlice(a.IP)
			out = append(out, ip.Unmap())
		}
	}
	slices.SortFunc(out, func(a, b netip.Addr) int { return a.Compare(b) })
	return out
}

func tunnelAddrs(t *testing.T, node *topo.Node) []netlink.Addr {
	t.Helper()
	lk, err := node.Netlink().LinkByName("tunl0")
	if err != nil {
		return nil
	}
	addrs, err := node.Netlink().AddrList(lk, netlink.FAMILY_V4)
	if err != nil {
		t.Fatalf("list tunl0 addresses in %s: %v", node.Name, err)
	}
	return addrs
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, timeout, what, cond)
}

// serveHTTP runs, in each gateway, an HTTP server on the VIP that answers
// with the gateway's name, swallows uploads and serves downloads.
func (l *dsrLab) serveHTTP(t *testing.T) {
	t.Helper()
	for _, g := range l.gateways {
		name := g.Name
		ln, err := g.Listen("tcp", net.JoinHostPort(vip.String(), "80"))
		if err != nil {
			t.Fatalf("listen on the VIP in %s: %v", name, err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, name) })
		mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, "%s %d\n", name, n)
		})
		mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
			n, _ := strconv.Atoi(r.URL.Query().Get("bytes"))
			w.Header().Set("X-Gateway", name)
			_, _ = io.CopyN(w, zeros{}, int64(n))
		})
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// newDirector returns the real director package driving kernel IPVS in
// node's namespace.
func newDirector(t *testing.T, node *topo.Node) (*director.Director, *ipvs.Handle) {
	t.Helper()
	h, err := ipvs.New(node.NsPath())
	if err != nil {
		t.Fatalf("open IPVS in %s: %v", node.Name, err)
	}
	t.Cleanup(h.Close)
	d, err := director.New(h, director.NetnsProcSys{NsPath: node.NsPath()},
		slog.New(slog.NewTextHandler(io.Discard, nil)), director.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d, h
}

func webService(addrs []netip.Addr, weights map[netip.Addr]int) model.Desired {
	var rs []model.RealServer
	for _, a := range addrs {
		w, ok := weights[a]
		if !ok {
			w = 1
		}
		rs = append(rs, model.RealServer{Addr: a, Weight: w})
	}
	return model.Desired{Services: []model.Service{{VIP: vip, Protocol: model.TCP, Port: 80, RealServers: rs}}}
}

func reconcile(t *testing.T, d *director.Director, desired model.Desired) director.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := d.Reconcile(ctx, desired)
	if err != nil {
		t.Fatalf("director reconcile: %v", err)
	}
	return res
}

// get fetches path from the VIP through the client node and returns the body.
func (l *dsrLab) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := l.client.HTTPClient().Get("http://" + vip.String() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return strings.TrimSpace(string(b))
}

func linkBytes(t *testing.T, node *topo.Node, ifname string) (rx, tx uint64) {
	t.Helper()
	lk, err := node.Netlink().LinkByName(ifname)
	if err != nil {
		t.Fatal(err)
	}
	s := lk.Attrs().Statistics
	return s.RxBytes, s.TxBytes
}

// serviceStats returns the counters of the IPVS service VIP:port once
// traffic shows in them: the kernel folds its per-CPU counters into the
// totals it reports only every 2 s (the rate estimator).
func serviceStats(t *testing.T, h *ipvs.Handle, port uint16) ipvs.SvcStats {
	t.Helper()
	deadline := time.Now().Add(6 * time.Second)
	for {
		svcs, err := h.GetServices()
		if err != nil {
			t.Fatal(err)
		}
		var st *ipvs.SvcStats
		for _, s := range svcs {
			if s.Address.Equal(vip.AsSlice()) && s.Port == port {
				st = &s.Stats
			}
		}
		if st == nil {
			t.Fatalf("no IPVS service for %s:%d", vip, port)
		}
		if st.PacketsIn > 0 || time.Now().After(deadline) {
			return *st
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// upDSR builds the lab with netd on every gateway, HTTP servers on the
// VIP and the first director programmed with every gateway.
func upDSR(t *testing.T, nGateways int) (*dsrLab, *director.Director, *ipvs.Handle) {
	t.Helper()
	l := newDSRLab(t, 1, nGateways)
	for _, g := range l.gateways {
		l.netd = append(l.netd, startNetd(t, g, vip))
	}
	l.serveHTTP(t)
	d, h := newDirector(t, l.directors[0])
	reconcile(t, d, webService(l.gwAddrs, nil))
	return l, d, h
}
