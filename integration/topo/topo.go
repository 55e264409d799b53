package topo

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Lab is a set of nodes built for one test.
type Lab struct {
	t      T
	prefix string
	mu     sync.Mutex
	nodes  map[string]*Node
	links  map[string]int
}

// New returns an empty Lab whose namespaces are removed when t ends.
func New(t T) *Lab {
	t.Helper()
	l := &Lab{t: t, prefix: fmt.Sprintf("tl%d", os.Getpid()%100000), nodes: map[string]*Node{}, links: map[string]int{}}
	t.Cleanup(l.destroy)
	return l
}

// Node returns the node called name, creating its namespace (with lo up)
// on first use.
func (l *Lab) Node(name string) *Node {
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if n, ok := l.nodes[name]; ok {
		return n
	}
	ns := l.prefix + "-" + name
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		l.t.Fatalf("topo: create node %s: %v: %s", name, err, out)
	}
	h, err := netns.GetFromName(ns)
	if err != nil {
		l.t.Fatalf("topo: open namespace of node %s: %v", name, err)
	}
	nl, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		l.t.Fatalf("topo: netlink handle for node %s: %v", name, err)
	}
	n := &Node{Name: name, ns: ns, handle: h, nl: nl}
	l.nodes[name] = n
	lo, err := nl.LinkByName("lo")
	if err == nil {
		err = nl.LinkSetUp(lo)
	}
	if err != nil {
		l.t.Fatalf("topo: bring lo up in node %s: %v", name, err)
	}
	return n
}

// Link joins a and b with a veth pair, gives each end its address (CIDR
// notation, "" for none) and brings both up. It returns the interface
// names in a and in b: the peer's node name (with a number when the same
// pair is linked twice).
func (l *Lab) Link(a, b *Node, aAddr, bAddr string) (string, string) {
	l.t.Helper()
	l.mu.Lock()
	key := a.Name + "|" + b.Name
	l.links[key]++
	idx := l.links[key]
	l.mu.Unlock()
	aIf, bIf := ifName(b.Name, idx), ifName(a.Name, idx)
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: aIf, Namespace: netlink.NsFd(int(a.handle)), MTU: 1500},
		PeerName:      bIf,
		PeerNamespace: netlink.NsFd(int(b.handle)),
	}
	// Created from a's namespace so that both ends land where they belong.
	if err := a.nl.LinkAdd(veth); err != nil {
		l.t.Fatalf("topo: link %s(%s) <-> %s(%s): %v", a.Name, aIf, b.Name, bIf, err)
	}
	a.setUp(l.t, aIf, aAddr)
	b.setUp(l.t, bIf, bAddr)
	return aIf, bIf
}

func ifName(peer string, idx int) string {
	name := peer
	if idx > 1 {
		name = fmt.Sprintf("%s%d", peer, idx)
	}
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

func (l *Lab) destroy() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, n := range l.nodes {
		n.nl.Close()
		_ = n.handle.Close()
		// Processes still in the namespace would keep it alive; kill them.
		if out, _ := exec.Command("ip", "netns", "pids", n.ns).Output(); len(out) > 0 {
			for _, pid := range strings.Fields(string(out)) {
				_ = exec.Command("kill", "-9", pid).Run()
			}
		}
		if out, err := exec.Command("ip", "netns", "del", n.ns).CombinedOutput(); err != nil {
			l.t.Logf("topo: delete node %s: %v: %s", name, err, out)
		}
	}
	l.nodes = map[string]*Node{}
}
