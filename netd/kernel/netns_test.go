package kernel

import (
	"net"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// newNetNS creates a fresh network namespace for a test that needs the
// real kernel (nftables, veth and netns work on the build machines' own
// kernel). It skips, saying why, when not root, and closes the namespace
// in Cleanup; the test's own thread stays in its original namespace.
func newNetNS(t *testing.T) netns.NsHandle {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces (runs as root in CI and in the lab)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatalf("get current netns: %v", err)
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		t.Fatalf("create netns: %v", err)
	}
	if err := netns.Set(orig); err != nil {
		t.Fatalf("restore netns: %v", err)
	}
	t.Cleanup(func() { _ = ns.Close() })
	return ns
}

// inNS runs fn on a locked thread inside ns.
func inNS(t *testing.T, ns netns.NsHandle, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		// The thread is not unlocked: if restoring fails it must die with
		// the goroutine rather than run other code in the wrong namespace.
		orig, err := netns.Get()
		if err != nil {
			t.Errorf("get netns: %v", err)
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			t.Errorf("enter netns: %v", err)
			return
		}
		fn()
		if err := netns.Set(orig); err == nil {
			runtime.UnlockOSThread()
		}
	}()
	<-done
}

func handleAt(t *testing.T, ns netns.NsHandle) *netlink.Handle {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatalf("netlink handle: %v", err)
	}
	t.Cleanup(h.Close)
	return h
}

func mustAddr(t *testing.T, h *netlink.Handle, link, cidr string) {
	t.Helper()
	lk, err := h.LinkByName(link)
	if err != nil {
		t.Fatal(err)
	}
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddrAdd(lk, a); err != nil {
		t.Fatalf("add %s to %s: %v", cidr, link, err)
	}
	if err := h.LinkSetUp(lk); err != nil {
		t.Fatal(err)
	}
}

// vethPair links two namespaces with a veth pair named a and b, both up.
func vethPair(t *testing.T, nsA, nsB netns.NsHandle, a, b string) {
	t.Helper()
	h := handleAt(t, nsA)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a, MTU: 1500}, PeerName: b, PeerNamespace: netlink.NsFd(nsB)}
	if err := h.LinkAdd(veth); err != nil {
		t.Fatalf("add veth %s/%s: %v", a, b, err)
	}
	for _, x := range []struct {
		ns   netns.NsHandle
		name string
	}{{nsA, a}, {nsB, b}, {nsA, "lo"}, {nsB, "lo"}} {
		hh := handleAt(t, x.ns)
		lk, err := hh.LinkByName(x.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := hh.LinkSetUp(lk); err != nil {
			t.Fatal(err)
		}
	}
}

func listenIn(t *testing.T, ns netns.NsHandle, addr string) net.Listener {
	t.Helper()
	var ln net.Listener
	var err error
	inNS(t, ns, func() { ln, err = net.Listen("tcp4", addr) })
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}
