//go:build lab

package l4

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/integration/topo"
)

// probeLab measures IPVS scheduling decisions without needing the real
// servers to answer: each director has its own client node, and every
// client has the same address, so the same (source address, source port)
// is the same flow at every director. A client sends one SYN per flow;
// the director's connection table then says which real server it chose.
// Real servers live in 198.18.100.0/24, routed into a dummy link that
// drops the tunnelled packets.
type probeLab struct {
	lab     *topo.Lab
	dirs    []*topo.Node
	clients []*topo.Node
}

const probeClient = "198.18.50.2"

func newProbeLab(t *testing.T, n int) *probeLab {
	t.Helper()
	p := &probeLab{lab: topo.New(t)}
	for k := range n {
		d := p.lab.Node(fmt.Sprintf("pdir%d", k+1))
		c := p.lab.Node(fmt.Sprintf("pcl%d", k+1))
		_, _ = p.lab.Link(c, d, probeClient+"/24", "198.18.50.1/24")
		c.AddRoute(t, "203.0.113.0/24", "198.18.50.1")
		for _, args := range [][]string{
			{"link", "add", "vip0", "type", "dummy"},
			{"addr", "add", vip.String() + "/32", "dev", "vip0"},
			{"link", "set", "vip0", "up"},
			{"link", "add", "sink0", "type", "dummy"},
			{"link", "set", "sink0", "up"},
			{"route", "add", "198.18.100.0/24", "dev", "sink0"},
		} {
			d.Run(t, "ip", args...)
		}
		p.dirs = append(p.dirs, d)
		p.clients = append(p.clients, c)
	}
	return p
}

// realServers returns 198.18.100.x for each x.
func realServers(xs ...int) []netip.Addr {
	var out []netip.Addr
	for _, x := range xs {
		out = append(out, netip.AddrFrom4([4]byte{198, 18, 100, byte(x)}))
	}
	return out
}

// flows sends one SYN to the VIP from each source port through client k
// and returns, per port, the real server director k chose.
func (p *probeLab) flows(t *testing.T, k int, ports []int) map[int]string {
	t.Helper()
	src := netip.MustParseAddr(probeClient).As4()
	dst := vip.As4()
	err := p.clients[k].Do(func() error {
		for _, port := range ports {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("socket: %w", err)
			}
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
			if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: src, Port: port}); err != nil {
				unix.Close(fd)
				return fmt.Errorf("bind port %d: %w", port, err)
			}
			err = unix.Connect(fd, &unix.SockaddrInet4{Addr: dst, Port: 80})
			// The SYN has left once connect returns; closing a socket in
			// SYN_SENT sends nothing more.
			unix.Close(fd)
			if err != nil && !errors.Is(err, unix.EINPROGRESS) {
				return fmt.Errorf("connect from port %d: %w", port, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("probe through %s: %v", p.clients[k].Name, err)
	}
	want := make(map[int]bool, len(ports))
	for _, port := range ports {
		want[port] = true
	}
	var got map[int]string
	deadline := time.Now().Add(60 * time.Second)
	for {
		got = p.connTable(t, k, want)
		if len(got) == len(ports) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(got) != len(ports) {
		t.Fatalf("director %s has connection entries for %d of %d probe flows", p.dirs[k].Name, len(got), len(ports))
	}
	return got
}

// connTable reads director k's IPVS connection table (ipvsadm -Lnc) for
// flows from the probe client on the given ports.
func (p *probeLab) connTable(t *testing.T, k int, ports map[int]bool) map[int]string {
	t.Helper()
	out := p.dirs[k].Run(t, "ipvsadm", "-Lnc")
	m := map[int]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// pro expire state source virtual destination
		if len(f) < 6 || f[0] != "TCP" || f[4] != vip.String()+":80" {
			continue
		}
		host, portS, ok := strings.Cut(f[3], ":")
		if !ok || host != probeClient {
			continue
		}
		port, err := strconv.Atoi(portS)
		if err != nil || !ports[port] {
			continue
		}
		m[port] = strings.TrimSuffix(f[5], ":80")
	}
	return m
}

func portRange(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// disagreements counts ports mapped to different real servers.
func disagreements(a, b map[int]string) int {
	n := 0
	for port, rs := range a {
		if b[port] != rs {
			n++
		}
	}
	return n
}

func spread(m map[int]string) map[string]int {
	out := map[string]int{}
	for _, rs := range m {
		out[rs]++
	}
	return out
}
