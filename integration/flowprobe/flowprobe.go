// Package flowprobe measures, in the lab, which real server an IPVS
// director chooses for a flow without needing the real servers to answer:
// a client sends one SYN per source port, and the director's connection
// table then names the real server of each. Directors that agree map the
// same (source address, source port) to the same real server. It works for
// both address families and touches only the nodes it is given.
package flowprobe

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/integration/topo"
)

// Flows sends one SYN from src on each port to dst through client and
// waits (up to a minute) until dir's IPVS connection table holds every
// one; it returns, per port, the real server dir chose.
func Flows(t topo.T, client, dir *topo.Node, src netip.Addr, dst netip.AddrPort, ports []int) map[int]string {
	t.Helper()
	if err := client.Do(func() error { return SendSYNs(src, dst, ports) }); err != nil {
		t.Fatalf("probe %s through %s: %v", dst, client.Name, err)
	}
	var got map[int]string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		got = Table(dir.Run(t, "ipvsadm", "-Lnc"), src, dst, ports)
		if len(got) == len(ports) || time.Now().After(deadline) {
			break
		}
	}
	if len(got) != len(ports) {
		t.Fatalf("director %s has connection entries for %d of %d probe flows to %s", dir.Name, len(got), len(ports), dst)
	}
	return got
}

// SendSYNs starts one TCP connection from src on each port to dst, in the
// calling network namespace, and closes it at once: the SYN has left once
// connect returns, and closing a socket in SYN_SENT sends nothing more.
func SendSYNs(src netip.Addr, dst netip.AddrPort, ports []int) error {
	for _, port := range ports {
		fd, err := unix.Socket(family(src), unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
		if err := unix.Bind(fd, sockaddr(netip.AddrPortFrom(src, uint16(port)))); err != nil {
			_ = unix.Close(fd)
			return fmt.Errorf("bind port %d: %w", port, err)
		}
		err = unix.Connect(fd, sockaddr(dst))
		_ = unix.Close(fd)
		if err != nil && !errors.Is(err, unix.EINPROGRESS) {
			return fmt.Errorf("connect from port %d: %w", port, err)
		}
	}
	return nil
}

func family(a netip.Addr) int {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}
	}
	return &unix.SockaddrInet6{Addr: ap.Addr().As16(), Port: int(ap.Port())}
}

// Table reads `ipvsadm -Lnc` output: per source port of src (among ports)
// towards dst, the real server's address (IPv6 without brackets).
func Table(out string, src netip.Addr, dst netip.AddrPort, ports []int) map[int]string {
	want := make(map[int]bool, len(ports))
	for _, p := range ports {
		want[p] = true
	}
	m := map[int]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// pro expire state source virtual destination
		if len(f) < 6 || f[0] != "TCP" {
			continue
		}
		from, err1 := netip.ParseAddrPort(f[3])
		to, err2 := netip.ParseAddrPort(f[4])
		rs, err3 := netip.ParseAddrPort(f[5])
		if err1 != nil || err2 != nil || err3 != nil || from.Addr() != src || to != dst || !want[int(from.Port())] {
			continue
		}
		m[int(from.Port())] = rs.Addr().String()
	}
	return m
}

// PortRange is n source ports from from on.
func PortRange(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// Disagreements counts the ports a and b map to different real servers.
func Disagreements(a, b map[int]string) int {
	n := 0
	for port, rs := range a {
		if b[port] != rs {
			n++
		}
	}
	return n
}

// Spread counts the flows per real server.
func Spread(m map[int]string) map[string]int {
	out := map[string]int{}
	for _, rs := range m {
		out[rs]++
	}
	return out
}
