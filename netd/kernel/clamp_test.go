package kernel

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func nftIn(t *testing.T, nsPath string, args ...string) string {
	t.Helper()
	out, err := exec.Command("nsenter", append([]string{"--net=" + nsPath, "nft"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("nft %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// nsPath names ns for other processes: this process's descriptor of it.
func nsPath(ns netns.NsHandle) string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), int(ns)) }

func TestClampStateRebuildUpdate(t *testing.T) {
	ns := newNetNS(t)
	path := nsPath(ns)
	c := NewClamp(ns)

	st, err := c.State()
	if err != nil || st.Intact {
		t.Fatalf("State on empty ruleset = %+v, %v; want not intact", st, err)
	}
	// A table netd does not own must survive everything below.
	nftIn(t, path, "add table inet foreign; add chain inet foreign c { type filter hook output priority 0; }; add rule inet foreign c counter")

	v10, v11, v12 := netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.11"), netip.MustParseAddr("203.0.113.12")
	v6a, v6b := netip.MustParseAddr("2001:db8:cafe::10"), netip.MustParseAddr("2001:db8:cafe::11")
	if err := c.Rebuild(1440, []netip.Addr{v10, v6a, v11}, nil); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	st, err = c.State()
	if err != nil || !st.Intact || st.MSS != 1440 || !sameAddrs(st.VIPs, []netip.Addr{v10, v11, v6a}) {
		t.Fatalf("State after Rebuild = %+v, %v", st, err)
	}
	listing := nftIn(t, path, "list table inet tlb_netd")
	for _, want := range []string{"hook output priority mangle", "tcp option maxseg size set 1440", "@vips", `comment "tlb-netd mss=1440"`,
		"ip6 saddr @vips6", "tcp option maxseg size set 1400", `comment "tlb-netd mss6=1400"`} {
		if !strings.Contains(listing, want) {
			t.Errorf("nft listing lacks %q:\n%s", want, listing)
		}
	}

	if err := c.UpdateVIPs([]netip.Addr{v12, v6b}, []netip.Addr{v10, v6a}); err != nil {
		t.Fatalf("UpdateVIPs: %v", err)
	}
	st, err = c.State()
	if err != nil || !st.Intact || !sameAddrs(st.VIPs, []netip.Addr{v11, v12, v6b}) {
		t.Fatalf("State after UpdateVIPs = %+v, %v", st, err)
	}

	// Someone adds a rule to netd's chain: the table is no longer intact,
	// and a rebuild restores exactly one rule.
	nftIn(t, path, "add rule inet tlb_netd mss_clamp counter")
	if st, err = c.State(); err != nil || st.Intact {
		t.Fatalf("State after tampering = %+v, %v; want not intact", st, err)
	}
	if err := c.Rebuild(1400, []netip.Addr{v11}, nil); err != nil {
		t.Fatalf("Rebuild after tampering: %v", err)
	}
	if st, err = c.State(); err != nil || !st.Intact || st.MSS != 1400 || !sameAddrs(st.VIPs, []netip.Addr{v11}) {
		t.Fatalf("State after second Rebuild = %+v, %v", st, err)
	}
	if got := nftIn(t, path, "list table inet foreign"); !strings.Contains(got, "counter") {
		t.Fatalf("foreign table changed:\n%s", got)
	}
}

// TestClampLowersAdvertisedMSS proves the rule on the wire: a client
// connecting to a VIP in another namespace over a 1500-MTU veth learns the
// clamped MSS, while a connection to the node's other address does not.
func TestClampLowersAdvertisedMSS(t *testing.T) {
	gw, client := newNetNS(t), newNetNS(t)
	vethPair(t, gw, client, "gw0", "cl0")
	hg, hc := handleAt(t, gw), handleAt(t, client)
	mustAddr(t, hg, "gw0", "198.18.0.1/24")
	mustAddr(t, hg, "lo", "203.0.113.10/32")
	mustAddr(t, hc, "cl0", "198.18.0.2/24")
	_, vipNet, _ := net.ParseCIDR("203.0.113.10/32")
	lk, _ := hc.LinkByName("cl0")
	if err := hc.RouteAdd(&netlink.Route{Dst: vipNet, Gw: net.ParseIP("198.18.0.1"), LinkIndex: lk.Attrs().Index}); err != nil {
		t.Fatalf("route to VIP: %v", err)
	}
	for _, addr := range []string{"203.0.113.10:8080", "198.18.0.1:8080"} {
		ln := listenIn(t, gw, addr)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
	}

	mssTo := func(addr string) int {
		var mss int
		inNS(t, client, func() {
			c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
			if err != nil {
				t.Errorf("dial %s: %v", addr, err)
				return
			}
			defer c.Close()
			raw, _ := c.(*net.TCPConn).SyscallConn()
			_ = raw.Control(func(fd uintptr) {
				mss, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG)
			})
			if err != nil {
				t.Errorf("TCP_MAXSEG: %v", err)
			}
		})
		return mss
	}

	before := mssTo("203.0.113.10:8080")
	if err := NewClamp(gw).Rebuild(1400, []netip.Addr{netip.MustParseAddr("203.0.113.10")}, nil); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	after := mssTo("203.0.113.10:8080")
	other := mssTo("198.18.0.1:8080")
	t.Logf("client MSS to VIP: %d without clamp, %d with clamp 1400; to non-VIP address: %d", before, after, other)
	if before <= 1400 {
		t.Fatalf("MSS without clamp = %d; the test cannot tell the clamp works", before)
	}
	if after > 1400 {
		t.Fatalf("MSS with clamp = %d, want <= 1400", after)
	}
	if other <= 1400 {
		t.Fatalf("MSS to an address outside the VIP set = %d, want unclamped", other)
	}
}

func sameAddrs(a, b []netip.Addr) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	cmp := func(x, y netip.Addr) int { return x.Compare(y) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return slices.Equal(a, b)
}
