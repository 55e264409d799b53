package demo

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tlbproject/tlb/integration/gatewaylab"
)

// Options configure one demo run.
type Options struct {
	BinDir   string    // where the tlb, netd and l7 binaries are
	Out      io.Writer // what a person reads
	Verbose  bool      // also show the daemons' logs
	Requests int       // requests the client sends (default 24)
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
	say("== 1. The data center: client -- router -- 2 directors; router -- 2 gateway nodes, 2 backend nodes")
	say("   client %s, directors %s, gateways %s, backends %s; VIP %s", "198.18.0.2", strings.Join(s.directorAddr, " "),
		strings.Join(s.gwAddr, " "), strings.Join(s.appAddr, " "), vip)
	say("   router: BIRD 2 peers with both directors (BGP, AS 64500 <- AS 64512), installs ECMP (merge paths),")
	say("   kernel L4 hash policy (fib_multipath_hash_policy=1); it has no route to %s until a director announces it", vipRange)

	startEdge(r, s, opts.BinDir, say)

	say("\n== 5. tlb on each director: IPVS services %s:443 and :80, scheduler mh, IPIP to both gateways,", vip)
	say("   each gateway's health from its Envoy's /ready; once IPVS is programmed and a gateway is healthy")
	say("   it announces %s over BGP with itself as next hop", vipRange)
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
			return strings.Count(string(out), "Tunnel") == 2*len(s.gateways)
		})
	}
	out, _ := s.directors[0].Cmd(filepath.Join(opts.BinDir, "tlb"), "status", "--runtime-dir", filepath.Join(s.tmp, s.directors[0].Name)).CombinedOutput()
	say("   `tlb status` on %s:\n%s", s.directors[0].Name, indent(string(out)))
	showRoutes(ctx, r, s, say, s.directorAddr)

	counts, err := requests(ctx, r, s, opts.Requests, say)
	if err != nil {
		return err
	}

	say("\n== 7. Direct server return: the directors only see the client's packets")
	waitFor(r, 10*time.Second, "the kernel's IPVS counters include the requests", func() bool {
		out, _ := s.directors[0].Cmd("ipvsadm", "-Ln", "--stats", "--exact").CombinedOutput()
		return inPackets(string(out), vip+":443") > 0
	})
	out, _ = s.directors[0].Cmd("ipvsadm", "-Ln", "--stats").CombinedOutput()
	say("   IPVS counters on %s (OutPkts stays 0: in tunnel mode the gateways answer the client themselves,", s.directors[0].Name)
	say("   source address %s, gateway -> router -> client, never through a director):\n%s", vip, indent(string(out)))

	if err := killMidTransfer(ctx, r, s, say); err != nil {
		return err
	}
	if err := showConsole(r, s, opts.BinDir, say); err != nil {
		return err
	}
	say("\nDemo finished: %d HTTPS requests, answered by %d gateways' Envoys through %d directors; a director lost mid-transfer broke no download.",
		opts.Requests, len(counts), len(s.directors))
	return ctx.Err()
}

// requests sends n HTTPS requests from the client, checking the
// certificate, and shows who answered each; then one plain-HTTP request,
// which Envoy redirects. It returns the requests per gateway.
func requests(ctx context.Context, r *runner, s *site, n int, say func(string, ...any)) (map[string]int, error) {
	say("\n== 6. The client sends %d requests to https://%s/ (the name resolved to %s, a new connection each),", n, gatewaylab.ShopHost, vip)
	say("   checking Envoy's certificate against the demo's CA")
	client := gatewaylab.Client(s.client, vip+":443", s.l7.CA, false)
	answers, perGateway := map[string]int{}, map[string]int{}
	for i := range n {
		a, err := gatewaylab.Get(ctx, client, gatewaylab.Route{Host: gatewaylab.ShopHost, Path: "/", Upstream: "web"})
		if err != nil {
			return nil, fmt.Errorf("request %d to the VIP: %w", i+1, err)
		}
		answers[fmt.Sprintf("%s through %s", a.Backend, s.gatewayName(a.Gateway))]++
		perGateway[a.Gateway]++
	}
	resp, err := client.Get("https://" + gatewaylab.ShopHost + "/")
	if err != nil {
		return nil, err
	}
	_ = resp.Body.Close()
	cert := resp.TLS.PeerCertificates[0]
	say("   certificate: %s, issued by %q, valid for %s: verified by the client (%s)", cert.Subject.CommonName, cert.Issuer.CommonName,
		strings.Join(cert.DNSNames, " "), tls.VersionName(resp.TLS.Version))
	names := make([]string, 0, len(answers))
	for k := range answers {
		names = append(names, k)
	}
	sort.Strings(names)
	say("   answered by (backend, and the gateway whose Envoy sent the request: the backend saw its address):")
	for _, k := range names {
		say("   %3d x %s", answers[k], k)
	}
	if len(perGateway) != len(s.gateways) {
		return nil, fmt.Errorf("answers came through %d gateways, want %d", len(perGateway), len(s.gateways))
	}
	if err := gatewaylab.Redirected(ctx, gatewaylab.Client(s.client, vip+":80", s.l7.CA, false), gatewaylab.ShopHost, "/cart"); err != nil {
		return nil, err
	}
	say("   http://%s/cart (port 80): 301 to https://%s/cart, answered by Envoy", gatewaylab.ShopHost, gatewaylab.ShopHost)
	return perGateway, nil
}

func (s *site) gatewayName(addr string) string {
	for i, a := range s.gwAddr {
		if a == addr {
			return fmt.Sprintf("%s (%s)", s.gateways[i].Name, a)
		}
	}
	return addr
}

// inPackets reads a service's InPkts from `ipvsadm -Ln --stats --exact`.
func inPackets(stats, service string) int64 {
	for _, line := range strings.Split(stats, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[1] == service {
			n, _ := strconv.ParseInt(f[3], 10, 64)
			return n
		}
	}
	return 0
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
