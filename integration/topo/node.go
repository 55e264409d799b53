package topo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Node is one network namespace of a Lab.
type Node struct {
	Name   string
	ns     string
	handle netns.NsHandle
	nl     *netlink.Handle
}

// NsName is the namespace's name (as `ip netns` knows it).
func (n *Node) NsName() string { return n.ns }

// NsPath is the namespace's bind mount, for ipvs.New or netns.GetFromPath.
func (n *Node) NsPath() string { return filepath.Join("/var/run/netns", n.ns) }

// Netlink is a netlink handle bound to the node's namespace. The Lab
// closes it.
func (n *Node) Netlink() *netlink.Handle { return n.nl }

func (n *Node) setUp(t T, ifname, cidr string) {
	t.Helper()
	link, err := n.nl.LinkByName(ifname)
	if err != nil {
		t.Fatalf("topo: find %s in node %s: %v", ifname, n.Name, err)
	}
	if cidr != "" {
		addr, err := netlink.ParseAddr(cidr)
		if err != nil {
			t.Fatalf("topo: address %q for %s in node %s: %v", cidr, ifname, n.Name, err)
		}
		if err := n.nl.AddrReplace(link, addr); err != nil {
			t.Fatalf("topo: add %s to %s in node %s: %v", cidr, ifname, n.Name, err)
		}
	}
	if err := n.nl.LinkSetUp(link); err != nil {
		t.Fatalf("topo: bring %s up in node %s: %v", ifname, n.Name, err)
	}
}

// AddAddr adds cidr to the interface ifname of the node.
func (n *Node) AddAddr(t T, ifname, cidr string) {
	t.Helper()
	n.setUp(t, ifname, cidr)
}

// AddRoute adds a route to dst ("default" or a CIDR) via the gateway gw.
func (n *Node) AddRoute(t T, dst, gw string) {
	t.Helper()
	route := &netlink.Route{Gw: net.ParseIP(gw)}
	if dst != "default" {
		p, err := netip.ParsePrefix(dst)
		if err != nil {
			t.Fatalf("topo: route destination %q in node %s: %v", dst, n.Name, err)
		}
		route.Dst = &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
	}
	if err := n.nl.RouteReplace(route); err != nil {
		t.Fatalf("topo: route %s via %s in node %s: %v", dst, gw, n.Name, err)
	}
}

// Sysctl writes value to /proc/sys/<key> inside the node (key like
// "net/ipv4/ip_forward" or "net.ipv4.ip_forward").
func (n *Node) Sysctl(t T, key, value string) {
	t.Helper()
	path := filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
	if err := n.Do(func() error { return os.WriteFile(path, []byte(value), 0o644) }); err != nil {
		t.Fatalf("topo: sysctl %s=%s in node %s: %v", key, value, n.Name, err)
	}
}

// Do runs fn on a locked OS thread inside the node's namespace. Sockets
// fn creates stay in the namespace after it returns.
func (n *Node) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("topo: current namespace: %w", err)
			return
		}
		defer func() { _ = orig.Close() }()
		if err := netns.Set(n.handle); err != nil {
			errc <- fmt.Errorf("topo: enter node %s: %w", n.Name, err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			// Leave the thread locked: the runtime ends it with the goroutine.
			errc <- fmt.Errorf("topo: leave node %s: %w", n.Name, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Cmd returns a command that runs inside the node's namespace.
func (n *Node) Cmd(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.ns, name}, args...)...)
}

// CmdContext is Cmd with a context.
func (n *Node) CmdContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.ns, name}, args...)...)
}

// Run runs a command inside the node and returns its combined output; the
// test fails when it fails.
func (n *Node) Run(t T, name string, args ...string) string {
	t.Helper()
	out, err := n.Cmd(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("topo: %s in node %s: %v\n%s", strings.Join(append([]string{name}, args...), " "), n.Name, err, out)
	}
	return string(out)
}

// Start starts a long-running command inside the node, with its output in
// the test log prefixed by the node's name; the test's cleanup kills it.
func (n *Node) Start(t T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := n.Cmd(name, args...)
	w := &logWriter{t: t, prefix: n.Name + "/" + filepath.Base(name) + ": "}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatalf("topo: start %s in node %s: %v", name, n.Name, err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		w.close()
	})
	return cmd
}

// Listen opens a listener inside the node.
func (n *Node) Listen(network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := n.Do(func() (err error) {
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// ListenFreebind listens on addr inside the node with IP_FREEBIND, as an
// Envoy listener with freebind does: the address need not be local yet
// (a VIP netd binds later).
func (n *Node) ListenFreebind(network, addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_IP, syscall.IP_FREEBIND, 1) }); err != nil {
			return err
		}
		return serr
	}}
	var ln net.Listener
	err := n.Do(func() (err error) {
		ln, err = lc.Listen(context.Background(), network, addr)
		return err
	})
	return ln, err
}

// Dial opens a connection from inside the node.
func (n *Node) Dial(network, addr string) (net.Conn, error) {
	return n.DialContext(context.Background(), network, addr)
}

// DialContext opens a connection from inside the node. LocalAddr, when
// non-nil, fixes the source address and port.
func (n *Node) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return n.DialFrom(ctx, nil, network, addr)
}

// DialFrom opens a connection from inside the node with a fixed local
// address (nil picks one).
func (n *Node) DialFrom(ctx context.Context, local net.Addr, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() (err error) {
		d := net.Dialer{LocalAddr: local, Timeout: 10 * time.Second}
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// HTTPClient returns a client whose connections are made inside the node.
// Keep-alives are off, so every request is a new connection (a new flow).
func (n *Node) HTTPClient() *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:       n.DialContext,
			DisableKeepAlives: true,
		},
	}
}
