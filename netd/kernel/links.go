package kernel

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tlbproject/tlb/netd"
	"github.com/tlbproject/tlb/netd/model"
)

// dumpRetries bounds retries of a netlink dump the kernel interrupted.
const dumpRetries = 5

// Links manages the tunnel link and its addresses through one netlink
// handle, which fixes the network namespace.
type Links struct {
	h *netlink.Handle
}

// NewLinks returns Links using h (from netlink.NewHandle or NewHandleAt).
func NewLinks(h *netlink.Handle) *Links { return &Links{h: h} }

var _ netd.TunnelLinks = (*Links)(nil)

func (l *Links) link(name string) (netlink.Link, error) {
	lk, err := l.h.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("find link %s: %w", name, err)
	}
	return lk, nil
}

// Tunnel reports the link called name; a missing link is not an error.
func (l *Links) Tunnel(name string) (netd.TunnelState, error) {
	lk, err := l.h.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return netd.TunnelState{}, nil
		}
		return netd.TunnelState{}, fmt.Errorf("find link %s: %w", name, err)
	}
	return netd.TunnelState{
		Exists: true,
		Kind:   lk.Type(),
		Up:     lk.Attrs().Flags&net.FlagUp != 0,
	}, nil
}

// CreateTunnel creates an IPIP link without fixed endpoints, so it
// receives every IPIP packet for the node. When the ipip module loads it
// creates tunl0 itself (possibly as a side effect of this very call); an
// existing link is adopted.
func (l *Links) CreateTunnel(name string) error {
	err := l.h.LinkAdd(&netlink.Iptun{LinkAttrs: netlink.LinkAttrs{Name: name}})
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add ipip link %s: %w", name, err)
	}
	if _, lerr := l.h.LinkByName(name); lerr != nil {
		return fmt.Errorf("add ipip link %s: another ipip link without endpoints (tunl0) already receives IPIP; use it: %w", name, err)
	}
	return nil
}

// CreateTunnel6 creates an ip6tnl link (IPv6-in-IPv6) without endpoints,
// which receives every IPv6-in-IPv6 packet for the node. When the
// ip6_tunnel module loads it creates ip6tnl0 itself (possibly as a side
// effect of this very call), and a second link without endpoints is
// refused: an existing link is adopted.
func (l *Links) CreateTunnel6(name string) error {
	err := l.h.LinkAdd(&netlink.Ip6tnl{LinkAttrs: netlink.LinkAttrs{Name: name}, Proto: unix.IPPROTO_IPV6})
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add ip6tnl link %s: %w", name, err)
	}
	if _, lerr := l.h.LinkByName(name); lerr != nil {
		return fmt.Errorf("add ip6tnl link %s: another ip6tnl link without endpoints (ip6tnl0) already receives IPv6-in-IPv6; use it: %w", name, err)
	}
	return nil
}

// SetUp brings the link up.
func (l *Links) SetUp(name string) error {
	lk, err := l.link(name)
	if err != nil {
		return err
	}
	if err := l.h.LinkSetUp(lk); err != nil {
		return fmt.Errorf("set link %s up: %w", name, err)
	}
	return nil
}

// marked6 are the flags of an IPv6 VIP netd binds (model.Mark6): no
// duplicate address detection (every gateway holds the VIP) and no prefix
// route (a /128 needs none).
const marked6 = unix.IFA_F_NODAD | unix.IFA_F_NOPREFIXROUTE

// Addrs lists the link's addresses, IPv4 with their labels, IPv6 labelled
// model.Mark6 when they bear netd's mark.
func (l *Links) Addrs(name string) ([]netd.TunnelAddr, error) {
	lk, err := l.link(name)
	if err != nil {
		return nil, err
	}
	var addrs []netlink.Addr
	for i := 0; ; i++ {
		addrs, err = l.h.AddrList(lk, netlink.FAMILY_ALL)
		if err == nil {
			break
		}
		if !errors.Is(err, netlink.ErrDumpInterrupted) || i == dumpRetries {
			return nil, fmt.Errorf("list addresses of %s: %w", name, err)
		}
	}
	out := make([]netd.TunnelAddr, 0, len(addrs))
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		ones, _ := a.Mask.Size()
		label := a.Label
		if ip.Is6() && !ip.Is4In6() {
			label = ""
			if a.Flags&marked6 == marked6 {
				label = model.Mark6
			}
		}
		out = append(out, netd.TunnelAddr{Prefix: netip.PrefixFrom(ip.Unmap(), ones), Label: label})
	}
	return out, nil
}

func toNetlink(a netd.TunnelAddr) *netlink.Addr {
	ip := a.Prefix.Addr().AsSlice()
	out := &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(a.Prefix.Bits(), len(ip)*8)}}
	if a.Prefix.Addr().Is6() {
		out.Flags = marked6
	} else {
		out.Label = a.Label
	}
	return out
}

// ReplaceAddr adds the address, or updates it if present.
func (l *Links) ReplaceAddr(name string, a netd.TunnelAddr) error {
	lk, err := l.link(name)
	if err != nil {
		return err
	}
	if err := l.h.AddrReplace(lk, toNetlink(a)); err != nil {
		return fmt.Errorf("replace address %s (label %s) on %s: %w", a.Prefix, a.Label, name, err)
	}
	return nil
}

// DelAddr removes the address.
func (l *Links) DelAddr(name string, a netd.TunnelAddr) error {
	lk, err := l.link(name)
	if err != nil {
		return err
	}
	if err := l.h.AddrDel(lk, toNetlink(a)); err != nil {
		return fmt.Errorf("delete address %s from %s: %w", a.Prefix, name, err)
	}
	return nil
}
