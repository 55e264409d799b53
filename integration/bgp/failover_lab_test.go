//go:build lab

package bgp_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/topo"
)

const (
	vip       = "203.0.113.10"
	vipSubnet = "203.0.113.0/24"
	streams   = 100
)

type dc struct {
	client, router     *topo.Node
	directors          []*topo.Node
	directorAddr       []string
	gateways           []*topo.Node
	gatewayAddr        []string
	speakers, tlbProcs []*exec.Cmd
	speakerArgs        [][]string // to restart a speaker
	tlbConfig          []string   // each director's tlb config file
	accepted           []*atomic.Int64
	bird               *birdlab.Router
	bin                string
}

// buildDC: client -- router -- director1, director2; router -- gateway1,
// gateway2. BIRD on the router learns the VIP subnet from both directors'
// bgpspeaker and installs an ECMP route with an L4 hash.
func buildDC(t *testing.T, bin string) *dc {
	t.Helper()
	lab := topo.New(t)
	d := &dc{client: lab.Node("client"), router: lab.Node("router"), bin: bin}
	lab.Link(d.client, d.router, "198.18.0.2/24", "198.18.0.1/24")
	d.client.AddRoute(t, "default", "198.18.0.1")
	for k, v := range map[string]string{
		"net.ipv4.ip_forward": "1", "net.ipv4.fib_multipath_hash_policy": "1",
		"net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0",
	} {
		d.router.Sysctl(t, k, v)
	}
	var nbrs []birdlab.Neighbor
	for i := 1; i <= 2; i++ {
		dir := lab.Node(fmt.Sprintf("director%d", i))
		addr := fmt.Sprintf("198.18.%d.2", i)
		lab.Link(dir, d.router, addr+"/24", fmt.Sprintf("198.18.%d.1/24", i))
		dir.AddRoute(t, "default", fmt.Sprintf("198.18.%d.1", i))
		d.directors, d.directorAddr = append(d.directors, dir), append(d.directorAddr, addr)
		nbrs = append(nbrs, birdlab.Neighbor{Name: fmt.Sprintf("director%d", i), Address: addr, ASN: 64512, Local: fmt.Sprintf("198.18.%d.1", i)})

		gw := lab.Node(fmt.Sprintf("gateway%d", i))
		gaddr := fmt.Sprintf("198.18.%d.2", 10+i)
		lab.Link(gw, d.router, gaddr+"/24", fmt.Sprintf("198.18.%d.1/24", 10+i))
		gw.AddRoute(t, "default", fmt.Sprintf("198.18.%d.1", 10+i))
		d.gateways, d.gatewayAddr = append(d.gateways, gw), append(d.gatewayAddr, gaddr)
	}
	r, err := birdlab.StartRouter(context.Background(), d.router.NsName(), t.TempDir(),
		birdlab.RouterConfig{RouterID: "198.18.0.1", ASN: 64500, Neighbors: nbrs})
	if err != nil {
		t.Fatalf("start bird on the router: %v", err)
	}
	d.bird = r
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bird log:\n%s", r.Log())
		}
		r.Stop()
	})

	tmp := t.TempDir()
	for _, gw := range d.gateways {
		cfg := writeFile(t, tmp, gw.Name+".yaml", fmt.Sprintf("netd:\n  metricsAddress: 127.0.0.1:9101\n  mss: 1440\nvips: [%s]\n", vip))
		gw.Start(t, filepath.Join(bin, "netd"), "run", "--config", cfg)
		waitUntil(t, 60*time.Second, gw.Name+" binds the VIP on tunl0", func() bool {
			out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
			return strings.Contains(string(out), vip+"/32")
		})
		var n atomic.Int64
		d.accepted = append(d.accepted, &n)
		echo(t, gw, &n)
	}
	for i, dir := range d.directors {
		cfg := writeFile(t, tmp, dir.Name+".yaml", tlbConfig(d.gatewayAddr, nil))
		d.tlbConfig = append(d.tlbConfig, cfg)
		// The VIP range must be local for IPVS (LOCAL_IN) to see it: the
		// route tlb/anyip owns (protocol 241). Replace is idempotent, so
		// this stays right once tlb run programs it itself.
		dir.Run(t, "ip", "route", "replace", "local", vipSubnet, "dev", "lo", "table", "local", "proto", "241")
		d.tlbProcs = append(d.tlbProcs, dir.Start(t, filepath.Join(bin, "tlb"), "run", "--config", cfg))
		waitUntil(t, 60*time.Second, dir.Name+" programs IPVS", func() bool {
			out, _ := dir.Cmd("ipvsadm", "-Ln").CombinedOutput()
			return strings.Count(string(out), "Tunnel") == len(d.gateways)
		})
		bgpCfg := writeFile(t, tmp, dir.Name+"-bgp.yaml", fmt.Sprintf(
			"localASN: 64512\nrouterID: %s\nallowedPrefixes: [%s]\npeers:\n  - {address: 198.18.%d.1, asn: 64500, localAddress: %s}\n",
			d.directorAddr[i], vipSubnet, i+1, d.directorAddr[i]))
		args := []string{"--config", bgpCfg, "--announce", vipSubnet, "--drain", "5s"}
		d.speakerArgs = append(d.speakerArgs, args)
		d.speakers = append(d.speakers, dir.Start(t, filepath.Join(bin, "bgpspeaker"), args...))
	}
	return d
}

// diagnose logs the state of every node, for a failed test.
func (d *dc) diagnose(t *testing.T) {
	show := func(n *topo.Node, args ...string) {
		out, err := n.Cmd(args[0], args[1:]...).CombinedOutput()
		t.Logf("%s$ %s (err %v)\n%s", n.Name, strings.Join(args, " "), err, out)
	}
	show(d.router, "ip", "route")
	show(d.router, "ip", "neigh")
	show(d.router, "ip", "-s", "link")
	show(d.client, "ip", "route")
	for _, n := range d.directors {
		show(n, "ipvsadm", "-Ln", "--stats")
		show(n, "ip", "-br", "addr")
		show(n, "ip", "route")
		show(n, "ip", "route", "show", "table", "local")
		show(n, "sysctl", "net.ipv4.vs.sloppy_tcp", "net.ipv4.conf.all.rp_filter")
	}
	for _, n := range d.gateways {
		show(n, "ip", "-s", "link", "show", "tunl0")
		show(n, "ip", "-br", "addr")
		show(n, "ss", "-ltn")
	}
}

// labBin is where tools/lab-test.sh put tlb, netd and bgpspeaker.
func labBin(t *testing.T) string {
	bin := os.Getenv("TLB_BIN_DIR")
	if bin == "" {
		t.Fatal("TLB_BIN_DIR is not set: run through tools/lab-test.sh")
	}
	return bin
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitUntil(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out after %v waiting until %s", within, what)
}

// tlbConfig is a director's config: VIP:80 with mh over the gateways,
// weight 1 unless down[gateway].
func tlbConfig(gateways []string, down map[string]bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "director:\n  metricsAddress: 127.0.0.1:9100\n  vipRanges: [%s]\n", vipSubnet)
	fmt.Fprintf(&b, "services:\n  - vip: %s\n    port: 80\n    protocol: tcp\n    scheduler: mh\n    realServers:\n", vip)
	for _, g := range gateways {
		w := 1
		if down[g] {
			w = 0
		}
		fmt.Fprintf(&b, "      - {address: %s, weight: %d}\n", g, w)
	}
	return b.String()
}

// echo serves a TCP echo on VIP:80 inside gateway gw, counting connections.
func echo(t *testing.T, gw *topo.Node, accepted *atomic.Int64) {
	ln, err := gw.Listen("tcp", vip+":80")
	if err != nil {
		t.Fatalf("listen on the VIP in %s: %v", gw.Name, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
}

// stream is one long-lived connection exchanging a counter every tick.
type stream struct {
	mu     sync.Mutex
	conn   net.Conn
	lastOK time.Time
	n      int
	err    error
}

func (s *stream) run(ctx context.Context, tick time.Duration) {
	buf, back := make([]byte, 8), make([]byte, 8)
	for i := uint64(0); ctx.Err() == nil; i++ {
		binary.BigEndian.PutUint64(buf, i)
		_ = s.conn.SetDeadline(time.Now().Add(30 * time.Second))
		_, err := s.conn.Write(buf)
		if err == nil {
			_, err = io.ReadFull(s.conn, back)
		}
		if err == nil && string(back) != string(buf) {
			err = fmt.Errorf("echo mismatch at %d", i)
		}
		s.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				s.err = err
			}
			s.mu.Unlock()
			return
		}
		s.lastOK, s.n = time.Now(), s.n+1
		s.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(tick):
		}
	}
}

func (s *stream) state() (time.Time, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastOK, s.n, s.err
}

// TestDirectorLossBreaksNoStreams: BIRD learns the VIP subnet from both
// directors and installs ECMP; 100 streams spread over both; director1
// dies silently (its packets are dropped, then its processes SIGKILLed),
// so BIRD must notice by the hold timer (3 s); every stream continues.
func TestDirectorLossBreaksNoStreams(t *testing.T) {
	d := buildDC(t, labBin(t))
	ctx := context.Background()

	t0 := time.Now()
	if _, _, err := d.bird.WaitRoutes(ctx, vipSubnet, 90*time.Second, hasNextHops(d.directorAddr...)); err != nil {
		t.Fatalf("both directors in bird: %v", err)
	}
	t.Logf("bird has %s via both directors %v after the speakers started", vipSubnet, time.Since(t0).Round(time.Millisecond))
	waitUntil(t, 30*time.Second, "the router's kernel has a 2-nexthop route", func() bool {
		out, _ := d.router.Cmd("ip", "route", "show", vipSubnet).CombinedOutput()
		return strings.Count(string(out), "nexthop via") == 2
	})

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var ss []*stream
	var wg sync.WaitGroup
	for i := range streams {
		c, err := d.client.DialContext(ctx, "tcp", vip+":80")
		if err != nil {
			d.diagnose(t)
			t.Fatalf("stream %d: dial the VIP: %v", i, err)
		}
		defer c.Close()
		s := &stream{conn: c}
		ss = append(ss, s)
		wg.Go(func() { s.run(sctx, 200*time.Millisecond) })
	}
	waitUntil(t, 60*time.Second, "every stream exchanged data", func() bool {
		for _, s := range ss {
			if _, n, err := s.state(); n < 2 || err != nil {
				return err != nil // stop waiting on an error; checked below
			}
		}
		return true
	})
	perDirector := make([]int, len(d.directors))
	for i, dir := range d.directors {
		out, _ := dir.Cmd("ipvsadm", "-Lnc").CombinedOutput()
		perDirector[i] = strings.Count(string(out), "ESTABLISHED")
	}
	t.Logf("streams per director before the kill (IPVS ESTABLISHED entries): %v", perDirector)
	if perDirector[0] == 0 || perDirector[1] == 0 {
		t.Fatalf("ECMP did not spread %d streams over both directors: %v", streams, perDirector)
	}

	// Director 1 dies without a word: drop everything in and out of it
	// (as if powered off), then SIGKILL its processes.
	d.directors[0].Run(t, "nft", "add table inet dead; "+
		"add chain inet dead drop_input { type filter hook input priority -300; policy drop; }; "+
		"add chain inet dead drop_output { type filter hook output priority -300; policy drop; }")
	killAt := time.Now()
	for _, p := range []*exec.Cmd{d.speakers[0], d.tlbProcs[0]} {
		_ = p.Process.Signal(syscall.SIGKILL)
	}
	_, detect, err := d.bird.WaitRoutes(ctx, vipSubnet, 30*time.Second, hasNextHops(d.directorAddr[1]))
	if err != nil {
		t.Fatalf("bird never dropped the dead director: %v", err)
	}
	t.Logf("bird dropped the dead director %v after the kill (hold time 3s)", detect.Round(time.Millisecond))
	if detect > 3*time.Second+2*time.Second { // hold time, plus slack for polling birdc in the emulated VM
		t.Errorf("dead director detected after %v, want within the 3s hold time", detect)
	}

	// Every stream must make progress after the kill.
	var recovered time.Time
	waitUntil(t, 60*time.Second, "every stream exchanged data after the kill", func() bool {
		latest := time.Time{}
		for _, s := range ss {
			last, _, err := s.state()
			if err != nil {
				return true
			}
			if !last.After(killAt) {
				return false
			}
			if last.After(latest) {
				latest = last
			}
		}
		recovered = time.Now()
		return true
	})
	time.Sleep(2 * time.Second)
	stop()
	wg.Wait()

	broken := 0
	for i, s := range ss {
		if _, _, err := s.state(); err != nil {
			broken++
			t.Errorf("stream %d broke: %v", i, err)
		}
	}
	t.Logf("BENCH bgp_dead_director_detect_ms %d ms", detect.Milliseconds())
	t.Logf("BENCH bgp_kill_recovery_ms %d ms", recovered.Sub(killAt).Milliseconds())
	t.Logf("BENCH bgp_streams_held %d count", streams)
	t.Logf("BENCH bgp_streams_broken %d count", broken)
}
