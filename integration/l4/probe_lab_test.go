//go:build lab

package l4

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/tlbproject/tlb/integration/flowprobe"
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
	return flowprobe.Flows(t, p.clients[k], p.dirs[k], netip.MustParseAddr(probeClient), netip.AddrPortFrom(vip, 80), ports)
}
