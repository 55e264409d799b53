package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// RouteMTU returns the MTU of the link of the IPv4 default route (the
// smallest when there are several, ECMP or not): the path MTU the MSS is
// derived from. Without a default route it is the smallest MTU of the
// links that are up with a global IPv4 address (tunnels and loopback left
// out).
func (l *Links) RouteMTU() (int, error) {
	var routes []netlink.Route
	var err error
	filter := &netlink.Route{Table: unix.RT_TABLE_MAIN}
	for i := 0; ; i++ {
		routes, err = l.h.RouteListFiltered(netlink.FAMILY_V4, filter, netlink.RT_FILTER_TABLE)
		if err == nil {
			break
		}
		if !errors.Is(err, netlink.ErrDumpInterrupted) || i == dumpRetries {
			return 0, fmt.Errorf("list IPv4 routes: %w", err)
		}
	}
	mtu := 0
	for _, r := range routes {
		if r.Dst != nil && r.Dst.IP != nil {
			if ones, _ := r.Dst.Mask.Size(); ones != 0 {
				continue
			}
		}
		idx := []int{r.LinkIndex}
		for _, nh := range r.MultiPath {
			idx = append(idx, nh.LinkIndex)
		}
		for _, i := range idx {
			if i == 0 {
				continue
			}
			lk, err := l.h.LinkByIndex(i)
			if err != nil {
				return 0, fmt.Errorf("find link %d of the default route: %w", i, err)
			}
			if m := lk.Attrs().MTU; mtu == 0 || m < mtu {
				mtu = m
			}
		}
	}
	if mtu == 0 {
		return l.addressedLinksMTU()
	}
	return mtu, nil
}

// addressedLinksMTU is RouteMTU on a node without a default route: the
// smallest MTU of the links that are up and carry a global IPv4 address,
// loopback and tunnels left out.
func (l *Links) addressedLinksMTU() (int, error) {
	links, err := l.h.LinkList()
	if err != nil {
		return 0, fmt.Errorf("list links: %w", err)
	}
	mtu := 0
	for _, lk := range links {
		a := lk.Attrs()
		if a.Flags&net.FlagUp == 0 || a.Flags&net.FlagLoopback != 0 || strings.Contains("ipip gre gretap sit ip6tnl vti", lk.Type()) {
			continue
		}
		addrs, err := l.h.AddrList(lk, netlink.FAMILY_V4)
		if err != nil {
			return 0, fmt.Errorf("list addresses of %s: %w", a.Name, err)
		}
		if !slices.ContainsFunc(addrs, func(x netlink.Addr) bool { return x.Scope == unix.RT_SCOPE_UNIVERSE }) {
			continue
		}
		if mtu == 0 || a.MTU < mtu {
			mtu = a.MTU
		}
	}
	if mtu == 0 {
		return 0, errors.New("no IPv4 default route and no link with a global IPv4 address")
	}
	return mtu, nil
}

// FOUReceivers lists the node's FOU receivers of one family (IPv6 when
// ipv6) by UDP port. A kernel without the fou module has none.
func (l *Links) FOUReceivers(ipv6 bool) (map[uint16]string, error) {
	fous, err := l.h.FouList(fouFamily(ipv6))
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil, fmt.Errorf("list FOU receivers (is the fou module available?): %w", err)
	}
	out := make(map[uint16]string, len(fous))
	for _, f := range fous {
		kind := "direct"
		if f.EncapType == netlink.FOU_ENCAP_GUE {
			kind = "gue"
		}
		out[uint16(f.Port)] = kind
	}
	return out, nil
}

// fouFamily is the address family of a FOU receiver.
func fouFamily(ipv6 bool) int {
	if ipv6 {
		return unix.AF_INET6
	}
	return unix.AF_INET
}

// AddGUEReceiver adds a GUE receiver on port (over IPv6 when ipv6): the
// kernel takes UDP datagrams to port off the socket layer, strips the GUE
// header and hands the inner packet (IPIP from an IPVS director, or
// IPv6-in-IPv6 over IPv6) to the tunnel.
//
// The request carries what `ip fou add port N gue [-6]` sends: port, type
// and family. netlink.FouAdd (vishvananda/netlink v1.3.1) also sends
// FOU_ATTR_IPPROTO 0, which the kernel refuses with ERANGE (checked on
// the lab's 6.1 kernel). The generic netlink socket is opened in the
// calling thread's namespace, as netlink.FouList's is: netd runs in the
// node's.
func (l *Links) AddGUEReceiver(port uint16, ipv6 bool) error {
	fam, err := l.h.GenlFamilyGet(netlink.FOU_GENL_NAME)
	if err != nil {
		return fmt.Errorf("find the fou generic netlink family (is the fou module available?): %w", err)
	}
	req := nl.NewNetlinkRequest(int(fam.ID), unix.NLM_F_ACK)
	req.AddRawData(guePortRequest(port, ipv6))
	if _, err := req.Execute(unix.NETLINK_GENERIC, 0); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add FOU gue receiver on udp port %d: %w", port, err)
	}
	return nil
}

// guePortRequest is the generic netlink payload of FOU_CMD_ADD for a GUE
// receiver on port, IPv6 when ipv6.
func guePortRequest(port uint16, ipv6 bool) []byte {
	out := (&nl.Genlmsg{Command: netlink.FOU_CMD_ADD, Version: 1}).Serialize()
	for _, a := range []*nl.RtAttr{
		nl.NewRtAttr(netlink.FOU_ATTR_PORT, binary.BigEndian.AppendUint16(nil, port)),
		nl.NewRtAttr(netlink.FOU_ATTR_TYPE, []byte{netlink.FOU_ENCAP_GUE}),
		nl.NewRtAttr(netlink.FOU_ATTR_AF, []byte{byte(fouFamily(ipv6))}),
	} {
		out = append(out, a.Serialize()...)
	}
	return out
}
