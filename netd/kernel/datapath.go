package kernel

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
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

// FOUReceivers lists the node's IPv4 FOU receivers by UDP port. A kernel
// without the fou module has none.
func (l *Links) FOUReceivers() (map[uint16]string, error) {
	fous, err := l.h.FouList(unix.AF_INET)
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

// AddGUEReceiver adds an IPv4 GUE receiver on port: the kernel takes UDP
// datagrams to port off the socket layer, strips the GUE header and hands
// the inner packet (IPIP from an IPVS director) to the tunnel.
func (l *Links) AddGUEReceiver(port uint16) error {
	err := l.h.FouAdd(netlink.Fou{Family: unix.AF_INET, Port: int(port), EncapType: netlink.FOU_ENCAP_GUE})
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add FOU gue receiver on udp port %d: %w", port, err)
	}
	return nil
}
