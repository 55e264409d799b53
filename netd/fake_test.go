package netd

import (
	"errors"
	"net/netip"
	"slices"

	"github.com/tlbproject/tlb/netd/model"
)

// fakeKernel is an in-memory stand-in for one node's links, sysctls and
// nftables, counting writes. It is for unit tests of the logic only; the
// real kernel is exercised by the lab tests in integration/l4.
type fakeKernel struct {
	links   map[string]*fakeLink
	sysctls map[string]string
	clamp   ClampState
	writes  int
	failOn  string // a write kind that fails: "addr", "sysctl", ...
	// routeMTU is the default-route link's MTU (0: no default route).
	routeMTU int
	fou      map[uint16]string
	fou6     map[uint16]string
}

type fakeLink struct {
	kind  string
	up    bool
	addrs []TunnelAddr
}

func newFakeKernel() *fakeKernel {
	return &fakeKernel{
		links: map[string]*fakeLink{},
		sysctls: map[string]string{
			"net/ipv4/conf/all/arp_ignore":   "0",
			"net/ipv4/conf/all/arp_announce": "0",
			"net/ipv4/conf/all/rp_filter":    "1",
		},
	}
}

var errInjected = errors.New("injected failure")

func (k *fakeKernel) write(kind string) error {
	if k.failOn == kind {
		return errInjected
	}
	k.writes++
	return nil
}

func (k *fakeKernel) Tunnel(name string) (TunnelState, error) {
	l, ok := k.links[name]
	if !ok {
		return TunnelState{}, nil
	}
	return TunnelState{Exists: true, Kind: l.kind, Up: l.up}, nil
}

func (k *fakeKernel) CreateTunnel(name string) error {
	if err := k.write("link"); err != nil {
		return err
	}
	k.links[name] = &fakeLink{kind: "ipip"}
	for _, s := range []string{"arp_ignore", "arp_announce", "rp_filter"} {
		k.sysctls["net/ipv4/conf/"+name+"/"+s] = "0"
	}
	return nil
}

func (k *fakeKernel) CreateTunnel6(name string) error {
	if err := k.write("link"); err != nil {
		return err
	}
	k.links[name] = &fakeLink{kind: "ip6tnl"}
	for _, s := range []string{"disable_ipv6", "accept_dad"} {
		k.sysctls["net/ipv6/conf/"+name+"/"+s] = "1"
	}
	return nil
}

func (k *fakeKernel) SetUp(name string) error {
	if err := k.write("link"); err != nil {
		return err
	}
	k.links[name].up = true
	return nil
}

func (k *fakeKernel) Addrs(name string) ([]TunnelAddr, error) {
	return slices.Clone(k.links[name].addrs), nil
}

func (k *fakeKernel) ReplaceAddr(name string, a TunnelAddr) error {
	if err := k.write("addr"); err != nil {
		return err
	}
	l := k.links[name]
	l.addrs = slices.DeleteFunc(l.addrs, func(b TunnelAddr) bool { return b.Prefix == a.Prefix })
	l.addrs = append(l.addrs, a)
	return nil
}

func (k *fakeKernel) DelAddr(name string, a TunnelAddr) error {
	if err := k.write("addr"); err != nil {
		return err
	}
	l := k.links[name]
	l.addrs = slices.DeleteFunc(l.addrs, func(b TunnelAddr) bool { return b.Prefix == a.Prefix })
	return nil
}

func (k *fakeKernel) Get(key string) (string, error) {
	v, ok := k.sysctls[key]
	if !ok {
		return "", errors.New("no such sysctl")
	}
	return v + "\n", nil
}

func (k *fakeKernel) Set(key, value string) error {
	if _, ok := k.sysctls[key]; !ok {
		return errors.New("no such sysctl")
	}
	if err := k.write("sysctl"); err != nil {
		return err
	}
	k.sysctls[key] = value
	return nil
}

func (k *fakeKernel) RouteMTU() (int, error) {
	if k.routeMTU == 0 {
		return 0, errors.New("no IPv4 default route")
	}
	return k.routeMTU, nil
}

func (k *fakeKernel) FOUReceivers(ipv6 bool) (map[uint16]string, error) {
	out := map[uint16]string{}
	src := k.fou
	if ipv6 {
		src = k.fou6
	}
	for p, kind := range src {
		out[p] = kind
	}
	return out, nil
}

func (k *fakeKernel) AddGUEReceiver(port uint16, ipv6 bool) error {
	if err := k.write("fou"); err != nil {
		return err
	}
	m := &k.fou
	if ipv6 {
		m = &k.fou6
	}
	if *m == nil {
		*m = map[uint16]string{}
	}
	(*m)[port] = "gue"
	return nil
}

func (k *fakeKernel) State() (ClampState, error) { return k.clamp, nil }

func (k *fakeKernel) Rebuild(mss uint16, vips []netip.Addr, ports []model.PortMap) error {
	if err := k.write("clamp"); err != nil {
		return err
	}
	k.clamp = ClampState{Intact: true, MSS: mss, VIPs: slices.Clone(vips), Ports: slices.Clone(ports)}
	return nil
}

func (k *fakeKernel) UpdateVIPs(add, del []netip.Addr) error {
	if err := k.write("clamp"); err != nil {
		return err
	}
	v := slices.DeleteFunc(k.clamp.VIPs, func(a netip.Addr) bool { return slices.Contains(del, a) })
	k.clamp.VIPs = append(v, add...)
	return nil
}
