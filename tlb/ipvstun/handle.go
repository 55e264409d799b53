package ipvstun

import (
	"errors"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// socketTimeout bounds a request: the kernel answers IPVS requests at
// once, so a longer wait means something is wrong.
const socketTimeout = 30 * time.Second

// dumpRetries bounds retries of a dump the kernel interrupted.
const dumpRetries = 5

// Handle sends IPVS real-server requests over one generic netlink socket
// in one network namespace. It is safe for concurrent use (requests on
// the socket are serialised).
type Handle struct {
	family  int
	sockets map[int]*nl.SocketHandle
}

// New opens a Handle in the network namespace at nsPath ("" = the
// calling thread's). It fails when the kernel has no IPVS.
func New(nsPath string) (*Handle, error) {
	ns := netns.None()
	if nsPath != "" {
		h, err := netns.GetFromPath(nsPath)
		if err != nil {
			return nil, fmt.Errorf("open network namespace %s: %w", nsPath, err)
		}
		defer func() { _ = h.Close() }()
		ns = h
	}
	sock, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_GENERIC)
	if err != nil {
		return nil, fmt.Errorf("open generic netlink socket: %w", err)
	}
	tv := unix.NsecToTimeval(socketTimeout.Nanoseconds())
	if err := errors.Join(sock.SetSendTimeout(&tv), sock.SetReceiveTimeout(&tv)); err != nil {
		sock.Close()
		return nil, fmt.Errorf("set generic netlink socket timeouts: %w", err)
	}
	sockets := map[int]*nl.SocketHandle{unix.NETLINK_GENERIC: {Socket: sock}}
	// Generic netlink family ids are the same in every namespace.
	fam, err := netlink.GenlFamilyGet("IPVS")
	if err != nil {
		sock.Close()
		return nil, fmt.Errorf("find the IPVS generic netlink family (is ip_vs loaded?): %w", err)
	}
	return &Handle{family: int(fam.ID), sockets: sockets}, nil
}

// Close closes the socket.
func (h *Handle) Close() { h.sockets[unix.NETLINK_GENERIC].Close() }

func (h *Handle) request(flags int, payload []byte) *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(h.family, flags)
	req.Sockets = h.sockets
	req.AddRawData(payload)
	return req
}

// NewDest adds real server d, with its tunnel, to svc.
func (h *Handle) NewDest(svc Service, d Dest) error {
	if _, err := h.request(unix.NLM_F_ACK, encodeDest(svc, d, false)).Execute(unix.NETLINK_GENERIC, 0); err != nil {
		return fmt.Errorf("add real server %s (tunnel type %d port %d) to IPVS service %s: %w", d.Addr, d.Tunnel.Type, d.Tunnel.Port, svc.Addr, err)
	}
	return nil
}

// SetDest changes real server d of svc: weight, forwarding and tunnel.
func (h *Handle) SetDest(svc Service, d Dest) error {
	if _, err := h.request(unix.NLM_F_ACK, encodeDest(svc, d, true)).Execute(unix.NETLINK_GENERIC, 0); err != nil {
		return fmt.Errorf("change real server %s (tunnel type %d port %d) of IPVS service %s: %w", d.Addr, d.Tunnel.Type, d.Tunnel.Port, svc.Addr, err)
	}
	return nil
}

// Dests lists svc's real servers in the kernel's list order, with their
// tunnels.
func (h *Handle) Dests(svc Service) ([]Dest, error) {
	var msgs [][]byte
	var err error
	for i := 0; ; i++ {
		msgs, err = h.request(unix.NLM_F_DUMP, encodeList(svc)).Execute(unix.NETLINK_GENERIC, 0)
		if err == nil {
			break
		}
		if !errors.Is(err, netlink.ErrDumpInterrupted) || i == dumpRetries {
			return nil, fmt.Errorf("list real servers of IPVS service %s: %w", svc.Addr, err)
		}
	}
	out := make([]Dest, 0, len(msgs))
	for _, m := range msgs {
		d, err := parseDest(m)
		if err != nil {
			return nil, fmt.Errorf("list real servers of IPVS service %s: %w", svc.Addr, err)
		}
		out = append(out, d)
	}
	return out, nil
}
