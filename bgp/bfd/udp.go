package bfd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// Port is the UDP port single-hop control packets are sent to (RFC 5881).
const Port = 3784

// Source ports a session sends from (RFC 5881 section 4).
const (
	minSourcePort = 49152
	maxSourcePort = 65535
)

// gtsmTTL is the only TTL a single-hop packet may be sent or received with
// (RFC 5881 section 5, the Generalized TTL Security Mechanism).
const gtsmTTL = 255

// reuseAddr lets receivers on a specific address and on the wildcard
// share port 3784, as several speakers in one namespace need.
func reuseAddr(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	})
	return errors.Join(err, serr)
}

// listenRx opens the receiving socket on local:port, asking the kernel
// for each packet's TTL.
func listenRx(local netip.Addr, port int) (*ipv4.PacketConn, error) {
	lc := net.ListenConfig{Control: reuseAddr}
	host := "0.0.0.0"
	if local.IsValid() {
		host = local.String()
	}
	c, err := lc.ListenPacket(context.Background(), "udp4", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		return nil, fmt.Errorf("listen for bfd on %s:%d: %w", host, port, err)
	}
	pc := ipv4.NewPacketConn(c)
	if err := pc.SetControlMessage(ipv4.FlagTTL, true); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ask for the ttl of bfd packets on %s:%d: %w", host, port, err)
	}
	return pc, nil
}

// udpSender sends one session's packets from a port in 49152-65535 with TTL 255.
type udpSender struct {
	conn *net.UDPConn
	to   *net.UDPAddr
}

// dialTx opens a session's sending socket: bound to local (any address when
// invalid) and a free source port picked at random in the RFC 5881 range.
func dialTx(local, peer netip.Addr, port int, rnd *rand.Rand) (*udpSender, error) {
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(peer, uint16(port)))
	laddr := net.IPv4zero
	if local.IsValid() {
		laddr = local.AsSlice()
	}
	var last error
	for range 32 {
		sport := minSourcePort + rnd.IntN(maxSourcePort-minSourcePort+1)
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: laddr, Port: sport})
		if err != nil {
			last = err
			continue
		}
		if err := ipv4.NewConn(c).SetTTL(gtsmTTL); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("set ttl 255 on bfd socket to %s: %w", peer, err)
		}
		return &udpSender{conn: c, to: to}, nil
	}
	return nil, fmt.Errorf("bind a bfd source port in %d-%d on %s: %w", minSourcePort, maxSourcePort, laddr, last)
}

// Send sends one packet to the peer's port 3784.
func (u *udpSender) Send(b []byte) error {
	_, err := u.conn.WriteToUDP(b, u.to)
	return err
}

// Close closes the socket.
func (u *udpSender) Close() error { return u.conn.Close() }
