//go:build lab

package l4

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/integration/topo"
)

// packet is what a capture keeps of one IPv4 packet seen on a link.
type packet struct {
	len     int    // the IPv4 total length
	proto   uint8  // the IPv4 protocol
	udpSrc  uint16 // UDP: source and destination ports
	udpDst  uint16
	gueNext uint8  // GUE (UDP to the capture's port): the GUE header's inner protocol
	inner   uint16 // the inner TCP source port of a tunnelled packet (IPIP or GUE)
	flags   uint8  // the inner TCP header's flags (tcpRST, ...)
}

// tcpRST is the RST bit of a TCP header's flags.
const tcpRST = 0x04

// capture is a packet socket on one link of a node: it records the IPv4
// packets that arrive on it until stopped.
type capture struct {
	mu      sync.Mutex
	packets []packet
	stop    chan struct{}
	done    chan struct{}
}

// startCapture opens an AF_PACKET socket bound to ifname in node and
// records incoming IPv4 packets; guePort says which UDP port carries GUE.
func startCapture(t *testing.T, node *topo.Node, ifname string, guePort uint16) *capture {
	t.Helper()
	lk, err := node.Netlink().LinkByName(ifname)
	if err != nil {
		t.Fatal(err)
	}
	proto := htons(unix.ETH_P_IP)
	var fd int
	err = node.Do(func() error {
		var err error
		if fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, int(proto)); err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: lk.Attrs().Index})
	})
	if err != nil {
		t.Fatalf("packet socket on %s in %s: %v", ifname, node.Name, err)
	}
	tv := unix.NsecToTimeval((100 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	c := &capture{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer unix.Close(fd)
		buf := make([]byte, 1<<16)
		for {
			select {
			case <-c.stop:
				return
			default:
			}
			n, from, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				continue // the timeout, to look at stop
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			if p, ok := parsePacket(buf[:n], guePort); ok {
				c.mu.Lock()
				c.packets = append(c.packets, p)
				c.mu.Unlock()
			}
		}
	}()
	t.Cleanup(c.end)
	return c
}

func (c *capture) end() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

// taken returns the packets recorded so far.
func (c *capture) taken() []packet {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]packet(nil), c.packets...)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// parsePacket reads an IPv4 packet: for UDP its ports, for GUE on guePort
// its inner protocol and the inner TCP source port, for IPIP the inner
// TCP source port.
func parsePacket(b []byte, guePort uint16) (packet, bool) {
	if len(b) < 20 || b[0]>>4 != 4 {
		return packet{}, false
	}
	ihl := int(b[0]&0x0f) * 4
	p := packet{len: int(binary.BigEndian.Uint16(b[2:4])), proto: b[9]}
	rest := b[ihl:]
	switch p.proto {
	case unix.IPPROTO_UDP:
		if len(rest) < 8 {
			return p, true
		}
		p.udpSrc, p.udpDst = binary.BigEndian.Uint16(rest[0:2]), binary.BigEndian.Uint16(rest[2:4])
		if p.udpDst == guePort && len(rest) >= 12 {
			p.gueNext = rest[9] // GUE version 0: flags/hlen, proto_ctype, flags
			if p.gueNext == unix.IPPROTO_IPIP {
				p.inner, p.flags = innerTCP(rest[12:])
			}
		}
	case unix.IPPROTO_IPIP:
		p.inner, p.flags = innerTCP(rest)
	}
	return p, true
}

// innerTCP returns the source port and the flags of the TCP header in
// the IPv4 packet b; 0, 0 when b holds none.
func innerTCP(b []byte) (port uint16, flags uint8) {
	if len(b) < 20 || b[0]>>4 != 4 || b[9] != unix.IPPROTO_TCP {
		return 0, 0
	}
	ihl := int(b[0]&0x0f) * 4
	if len(b) < ihl+14 {
		return 0, 0
	}
	return binary.BigEndian.Uint16(b[ihl : ihl+2]), b[ihl+13]
}

// uplink returns the name of node's only veth: its link towards the router.
func uplink(t *testing.T, node *topo.Node) string {
	t.Helper()
	links, err := node.Netlink().LinkList()
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, lk := range links {
		if lk.Type() == "veth" {
			if name != "" {
				t.Fatalf("node %s has more than one veth", node.Name)
			}
			name = lk.Attrs().Name
		}
	}
	if name == "" {
		t.Fatalf("node %s has no veth", node.Name)
	}
	return name
}
