//go:build lab

package l4

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/integration/topo"
)

// setMTU sets the MTU of every veth of every node.
func setMTU(t *testing.T, mtu int, nodes ...*topo.Node) {
	t.Helper()
	for _, n := range nodes {
		links, err := n.Netlink().LinkList()
		if err != nil {
			t.Fatal(err)
		}
		for _, lk := range links {
			if lk.Type() != "veth" {
				continue
			}
			if err := n.Netlink().LinkSetMTU(lk, mtu); err != nil {
				t.Fatalf("set MTU %d on %s in %s: %v", mtu, lk.Attrs().Name, n.Name, err)
			}
		}
	}
}

// bigUpload sends size bytes to the VIP in writes of chunk bytes (large
// writes: the kernel builds GSO segments of up to 64 KiB) to the server
// serveUpload runs, and returns the MSS the client learned and the
// server's answer: "<gateway> <bytes received> <rcv_mss>".
func bigUpload(client *topo.Node, size, chunk int, timeout time.Duration) (mss int, answer string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := client.DialContext(ctx, "tcp4", netip.AddrPortFrom(vip, 80).String())
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return 0, "", err
	}
	if err := raw.Control(func(fd uintptr) { mss, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG) }); err != nil {
		return 0, "", err
	}
	if _, err := fmt.Fprintf(c, "up %d\n", size); err != nil {
		return mss, "", err
	}
	buf := make([]byte, chunk)
	for sent := 0; sent < size; sent += chunk {
		if _, err := c.Write(buf[:min(chunk, size-sent)]); err != nil {
			return mss, "", fmt.Errorf("upload: %d of %d bytes written: %w", sent, size, err)
		}
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return mss, strings.TrimSpace(line), err
}

// serveUpload runs, in each gateway, a TCP server on VIP:80 that reads
// "up N\n" and N bytes, then answers with its name, the bytes received
// and the kernel's estimate of the largest segment it received
// (tcpi_rcv_mss, from each segment's GSO size, so GRO does not hide it).
func serveUpload(t *testing.T, gateways []*topo.Node) {
	t.Helper()
	for _, g := range gateways {
		ln, err := g.Listen("tcp4", netip.AddrPortFrom(vip, 80).String())
		if err != nil {
			t.Fatalf("listen on the VIP in %s: %v", g.Name, err)
		}
		t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					r := bufio.NewReader(c)
					var n int64
					if _, err := fmt.Fscanf(r, "up %d\n", &n); err != nil {
						return
					}
					got, _ := io.CopyN(io.Discard, r, n)
					rcvMSS := 0
					if raw, err := c.(*net.TCPConn).SyscallConn(); err == nil {
						_ = raw.Control(func(fd uintptr) {
							if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
								rcvMSS = int(info.Rcv_mss)
							}
						})
					}
					fmt.Fprintf(c, "%s %d %d\n", g.Name, got, rcvMSS)
				}()
			}
		}()
	}
}

// TestJumboFramesThroughTheVIP proves the MTU-aware clamp: every link at
// MTU 9000, netd (the real binary, mss auto) derives its clamp from the
// default route's link, 9000 - 20 (IPIP) - 40 = 8940, instead of the old
// fixed 1440; a client connecting to the VIP learns an MSS above 1460,
// and 8 MiB uploaded in 64 KiB writes arrive whole with ICMP frag-needed
// dropped, in segments above 1460 bytes as the gateway's kernel measured
// them.
// Control: with netd.mss off the same upload stalls, since 8960-byte
// segments do not fit the tunnel.
func TestJumboFramesThroughTheVIP(t *testing.T) {
	l := newDSRLab(t, 1, 2)
	setMTU(t, 9000, append(append([]*topo.Node{l.client, l.router}, l.directors...), l.gateways...)...)
	for _, g := range l.gateways {
		l.netd = append(l.netd, startNetdSettings(t, g, "  mss: auto\n", vip))
	}
	for _, g := range l.gateways {
		waitFor(t, 30*time.Second, "netd derives the jumbo clamp in "+g.Name, func() bool { return clampMSS(t, g) == "8940" })
	}
	serveUpload(t, l.gateways)
	d, _ := newDirector(t, l.directors[0])
	reconcile(t, d, webService(l.gwAddrs, nil))
	dropFragNeeded(t, l.router)

	const size, chunk = 8 << 20, 64 << 10
	began := time.Now()
	mss, answer, err := bigUpload(l.client, size, chunk, 120*time.Second)
	if err != nil {
		t.Fatalf("8 MiB upload in 64 KiB writes at MTU 9000: %v (MSS %d)", err, mss)
	}
	var gw string
	var got, rcvMSS int
	if _, err := fmt.Sscanf(answer, "%s %d %d", &gw, &got, &rcvMSS); err != nil {
		t.Fatalf("answer %q: %v", answer, err)
	}
	t.Logf("client MSS %d; %d bytes uploaded in %d-byte writes in %s; %s received %d bytes, largest segment (tcpi_rcv_mss) %d bytes",
		mss, size, chunk, time.Since(began).Round(time.Millisecond), gw, got, rcvMSS)
	if mss <= 1460 || mss > 8940 {
		t.Errorf("client MSS %d, want above 1460 and at most the clamp 8940", mss)
	}
	if got != size {
		t.Errorf("gateway received %d bytes, want %d", got, size)
	}
	if rcvMSS <= 1460 || rcvMSS > 8940 {
		t.Errorf("gateway's largest received segment %d bytes, want jumbo segments above 1460 and within the clamp 8940", rcvMSS)
	}

	// Control: the clamp off. Full 8960-byte segments plus 20 bytes of
	// IPIP exceed 9000; the director's frag-needed never reaches the
	// client, so the upload stalls.
	for _, n := range l.netd {
		writeFile(t, n.config, strings.Replace(readFile(t, n.config), "mss: auto", `mss: "off"`, 1))
	}
	for _, g := range l.gateways {
		waitFor(t, 30*time.Second, "netd switches the clamp off in "+g.Name, func() bool { return clampMSS(t, g) == "" })
	}
	l.client.Run(t, "ip", "route", "flush", "cache")
	mss, answer, err = bigUpload(l.client, 1<<20, chunk, 10*time.Second)
	if err == nil {
		t.Fatalf("upload with the clamp off completed (MSS %d, %q); the test cannot show the clamp matters", mss, answer)
	}
	t.Logf("control: clamp off, client MSS %d, the 1 MiB upload failed as expected: %v; router: %s", mss, err,
		strings.TrimSpace(l.router.Run(t, "nft", "list", "chain", "inet", "lab", "icmpdrop")))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
