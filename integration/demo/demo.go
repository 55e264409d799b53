package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/topo"
)

// Options configure one demo run.
type Options struct {
	BinDir   string    // where the tlb and netd binaries are
	Out      io.Writer // what a person reads
	Verbose  bool      // also show the daemons' logs
	Requests int       // requests the client sends (default 24)
}

// The demo's addresses: links from 198.18.0.0/15 (benchmarking range) and the
// VIP from TEST-NET-3, so nothing here can leak anywhere real.
const (
	vip      = "203.0.113.10"
	vipRange = "203.0.113.0/24"
)

type site struct {
	lab                  *topo.Lab
	client, router       *topo.Node
	directors, gateways  []*topo.Node
	directorAddr, gwAddr []string
	directorIf           []string // the director's interface towards the router
	routerAddr           []string // the router's address on each director's link
	tlb                  []*exec.Cmd
	bird                 *birdlab.Router
	tmp                  string
}

// Run runs the demo and returns an error when something did not work.
func Run(ctx context.Context, opts Options) (err error) {
	if opts.Requests == 0 {
		opts.Requests = 24
	}
	r := &runner{out: opts.Out, verbose: opts.Verbose}
	defer r.close()
	defer func() {
		if p := recover(); p != nil {
			a, ok := p.(abort)
			if !ok {
				panic(p)
			}
			err = a.err
		}
	}()
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(opts.Out, format+"\n", args...) }

	s := build(r)
	say("== 1. The data center: client -- router -- 2 directors; router -- 2 gateway nodes")
	say("   client %s, directors %s, gateways %s; VIP %s", "198.18.0.2", strings.Join(s.directorAddr, " "), strings.Join(s.gwAddr, " "), vip)
	say("   router: BIRD 2 peers with both directors (BGP, AS 64500 <- AS 64512), installs ECMP (merge paths),")
	say("   kernel L4 hash policy (fib_multipath_hash_policy=1); it has no route to %s until a director announces it", vipRange)

	say("\n== 2. netd on each gateway: tunl0 up, VIP bound on it, DSR sysctls, MSS clamp")
	for i, gw := range s.gateways {
		// The obs listener on the gateway's address, for the console.
		cfg := r.writeFile(s.tmp, gw.Name+".yaml", fmt.Sprintf("netd:\n  metricsAddress: %s:9101\n  mss: 1440\nvips: [%s]\n", s.gwAddr[i], vip))
		gw.Start(r, filepath.Join(opts.BinDir, "netd"), "run", "--config", cfg)
		waitFor(r, 20*time.Second, gw.Name+" binds the VIP on tunl0", func() bool {
			out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
			return strings.Contains(string(out), vip+"/32")
		})
		out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
		say("   %s: %s", gw.Name, strings.Join(strings.Fields(string(out)), " "))
		serveHTTP(r, gw, fmt.Sprintf("hello from %s (%s)", gw.Name, s.gwAddr[i]))
	}

	say("\n== 3. tlb on each director: IPVS service %s:80, scheduler mh, IPIP to both gateways;", vip)
	say("   once IPVS is programmed it announces %s over BGP with itself as next hop", vipRange)
	for i, d := range s.directors {
		// The two directors list the gateways in opposite orders: the
		// canonical order makes their Maglev tables identical anyway.
		gws := append([]string(nil), s.gwAddr...)
		if i == 1 {
			sort.Sort(sort.Reverse(sort.StringSlice(gws)))
		}
		cfg := r.writeFile(s.tmp, d.Name+".yaml", directorConfig(filepath.Join(s.tmp, d.Name), s.directorAddr[i], s.routerAddr[i], gws))
		s.tlb = append(s.tlb, d.Start(r, filepath.Join(opts.BinDir, "tlb"), "run", "--config", cfg))
		waitFor(r, 20*time.Second, d.Name+" programs IPVS", func() bool {
			out, _ := d.Cmd("ipvsadm", "-Ln").CombinedOutput()
			return strings.Count(string(out), "Tunnel") == len(s.gateways)
		})
	}
	out, _ := s.directors[0].Cmd(filepath.Join(opts.BinDir, "tlb"), "status", "--runtime-dir", filepath.Join(s.tmp, s.directors[0].Name)).CombinedOutput()
	say("   `tlb status` on %s:\n%s", s.directors[0].Name, indent(string(out)))
	showRoutes(ctx, r, s, say, s.directorAddr)

	say("\n== 4. The client sends %d requests to http://%s/ (a new connection each)", opts.Requests, vip)
	before := txBytes(r, s)
	counts := map[string]int{}
	received := 0
	client := s.client.HTTPClient()
	for i := 0; i < opts.Requests; i++ {
		resp, err := client.Get("http://" + vip + "/")
		if err != nil {
			r.Fatalf("request %d to the VIP: %v", i+1, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		counts[strings.TrimSpace(string(body))]++
		received += len(body)
	}
	after := txBytes(r, s)
	names := make([]string, 0, len(counts))
	for k := range counts {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		say("   %3d x %q", counts[k], k)
	}
	if len(counts) != len(s.gateways) {
		return fmt.Errorf("answers came from %d gateways, want %d", len(counts), len(s.gateways))
	}

	say("\n== 5. Direct server return: bytes each director sent back towards the router")
	for i, d := range s.directors {
		say("   %s: %d bytes out (IPIP to gateways only; replies bypass it)", d.Name, after[i]-before[i])
	}
	say("   the client received %d bytes of response bodies (plus headers) straight from the gateways,", received)
	say("   source address %s: gateway -> router -> client, never through a director", vip)
	time.Sleep(2500 * time.Millisecond) // the kernel folds IPVS counters every 2 s
	out, _ = s.directors[0].Cmd("ipvsadm", "-Ln", "--stats").CombinedOutput()
	say("   IPVS counters on %s (OutPkts stays 0 in tunnel mode):\n%s", s.directors[0].Name, indent(string(out)))

	if err := killMidTransfer(ctx, r, s, say); err != nil {
		return err
	}
	if err := showConsole(r, s, opts.BinDir, say); err != nil {
		return err
	}
	say("\nDemo finished: %d requests, answered by %d gateways through %d directors; a director lost mid-transfer broke no download.",
		opts.Requests, len(counts), len(s.directors))
	return ctx.Err()
}

func directorConfig(runtimeDir, addr, router string, gateways []string) string {
	var b strings.Builder
	// The obs listener on the director's address, for the console.
	fmt.Fprintf(&b, "director:\n  metricsAddress: %s:9100\n  runtimeDir: %s\n  vipRanges: [%s]\n  drainPeriod: 2s\n", addr, runtimeDir, vipRange)
	fmt.Fprintf(&b, "bgp:\n  localASN: 64512\n  routerID: %s\n  allowedPrefixes: [%s]\n  peers:\n    - {address: %s, asn: 64500, localAddress: %s}\n",
		addr, vipRange, router, addr)
	fmt.Fprintf(&b, "services:\n  - vip: %s\n    port: 80\n    protocol: tcp\n    scheduler: mh\n    realServers:\n", vip)
	for _, g := range gateways {
		fmt.Fprintf(&b, "      - {address: %s, weight: 1}\n", g)
	}
	return b.String()
}

func build(r *runner) *site {
	tmp, err := os.MkdirTemp("", "tlb-demo-")
	if err != nil {
		r.Fatalf("temp dir: %v", err)
	}
	r.Cleanup(func() { _ = os.RemoveAll(tmp) })
	if err := os.Mkdir(filepath.Join(tmp, "bird"), 0o755); err != nil {
		r.Fatalf("bird dir: %v", err)
	}
	lab := topo.New(r)
	s := &site{lab: lab, tmp: tmp, client: lab.Node("client"), router: lab.Node("router")}
	lab.Link(s.client, s.router, "198.18.0.2/24", "198.18.0.1/24")
	s.client.AddRoute(r, "default", "198.18.0.1")
	// The director-loss step must not pass because a stalled flow rehashed
	// itself onto the other director (net.core.txrehash, LAB.md).
	s.client.Sysctl(r, "net.core.txrehash", "0")
	for _, k := range []string{"net.ipv4.ip_forward", "net.ipv4.fib_multipath_hash_policy"} {
		s.router.Sysctl(r, k, "1")
	}
	for _, k := range []string{"net.ipv4.conf.all.rp_filter", "net.ipv4.conf.default.rp_filter"} {
		s.router.Sysctl(r, k, "0")
	}
	var nbrs []birdlab.Neighbor
	for i := 1; i <= 2; i++ {
		d := lab.Node(fmt.Sprintf("director%d", i))
		addr := fmt.Sprintf("198.18.%d.2", i)
		dIf, _ := lab.Link(d, s.router, addr+"/24", fmt.Sprintf("198.18.%d.1/24", i))
		d.AddRoute(r, "default", fmt.Sprintf("198.18.%d.1", i))
		s.directors, s.directorAddr, s.directorIf = append(s.directors, d), append(s.directorAddr, addr), append(s.directorIf, dIf)
		s.routerAddr = append(s.routerAddr, fmt.Sprintf("198.18.%d.1", i))
		nbrs = append(nbrs, birdlab.Neighbor{Name: d.Name, Address: addr, ASN: 64512, Local: s.routerAddr[i-1]})

		g := lab.Node(fmt.Sprintf("gateway%d", i))
		gaddr := fmt.Sprintf("198.18.%d.2", 10+i)
		lab.Link(g, s.router, gaddr+"/24", fmt.Sprintf("198.18.%d.1/24", 10+i))
		g.AddRoute(r, "default", fmt.Sprintf("198.18.%d.1", 10+i))
		s.gateways, s.gwAddr = append(s.gateways, g), append(s.gwAddr, gaddr)
	}
	bird, err := birdlab.StartRouter(context.Background(), s.router.NsName(), filepath.Join(tmp, "bird"),
		birdlab.RouterConfig{RouterID: "198.18.0.1", ASN: 64500, Neighbors: nbrs})
	if err != nil {
		r.Fatalf("start BIRD on the router: %v", err)
	}
	r.Cleanup(bird.Stop)
	s.bird = bird
	return s
}

// serveHTTP answers on the VIP inside a gateway node.
func serveHTTP(r *runner, gw *topo.Node, msg string) {
	ln, err := gw.Listen("tcp", vip+":80")
	if err != nil {
		r.Fatalf("listen on the VIP in %s: %v", gw.Name, err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/download" {
			download(w)
			return
		}
		_, _ = io.WriteString(w, msg+"\n")
	})}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.Logf("http server in %s: %v", gw.Name, err)
		}
	}()
	r.Cleanup(func() { _ = srv.Close() })
}

// txBytes reads each director's bytes sent on its link to the router.
func txBytes(r *runner, s *site) []uint64 {
	out := make([]uint64, len(s.directors))
	for i, d := range s.directors {
		l, err := d.Netlink().LinkByName(s.directorIf[i])
		if err != nil {
			r.Fatalf("read counters of %s: %v", d.Name, err)
		}
		out[i] = l.Attrs().Statistics.TxBytes
	}
	return out
}

func waitFor(r *runner, limit time.Duration, what string, ok func() bool) {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			r.Fatalf("timed out after %s waiting until %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "     " + l
	}
	return strings.Join(lines, "\n")
}
