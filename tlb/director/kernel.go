package director

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/ipvstun"
	"github.com/tlbproject/tlb/tlb/model"
)

// Kernel is the director's IPVS handle on a real kernel: moby/ipvs for
// services and IPIP real servers, package ipvstun for what moby/ipvs
// cannot carry (GUE real servers, and every real server's tunnel when
// listing). Both sockets are bound to one network namespace.
type Kernel struct {
	*ipvs.Handle
	tun *ipvstun.Handle
}

var (
	_ IPVS    = (*Kernel)(nil)
	_ Tunnels = (*Kernel)(nil)
)

// OpenKernel opens the director's handles in the network namespace at
// nsPath ("" = the current one).
func OpenKernel(nsPath string) (*Kernel, error) {
	h, err := ipvs.New(nsPath)
	if err != nil {
		return nil, fmt.Errorf("open IPVS: %w", err)
	}
	t, err := ipvstun.New(nsPath)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("open IPVS tunnels: %w", err)
	}
	return &Kernel{Handle: h, tun: t}, nil
}

// Close closes both sockets.
func (k *Kernel) Close() {
	k.Handle.Close()
	k.tun.Close()
}

// NewTunnelDestination adds d to s reached through encap: IPIP through
// moby/ipvs, GUE through ipvstun.
func (k *Kernel) NewTunnelDestination(s *ipvs.Service, d *ipvs.Destination, encap model.Encap) error {
	if !encap.IsGUE() {
		return k.NewDestination(s, d)
	}
	svc, dest, err := tunnelRequest(s, d, encap)
	if err != nil {
		return err
	}
	return k.tun.NewDest(svc, dest)
}

// UpdateTunnelDestination changes d of s in place. An IPIP write through
// moby/ipvs leaves the tunnel attributes out, which the kernel reads as
// IPIP, so a GUE real server turns back into IPIP.
func (k *Kernel) UpdateTunnelDestination(s *ipvs.Service, d *ipvs.Destination, encap model.Encap) error {
	if !encap.IsGUE() {
		return k.UpdateDestination(s, d)
	}
	svc, dest, err := tunnelRequest(s, d, encap)
	if err != nil {
		return err
	}
	return k.tun.SetDest(svc, dest)
}

// GetTunnelDestinations lists s's real servers with their tunnels in one
// dump.
func (k *Kernel) GetTunnelDestinations(s *ipvs.Service) ([]TunnelDestination, error) {
	svc, err := tunnelService(s)
	if err != nil {
		return nil, err
	}
	dests, err := k.tun.Dests(svc)
	if err != nil {
		return nil, err
	}
	out := make([]TunnelDestination, 0, len(dests))
	for _, d := range dests {
		out = append(out, TunnelDestination{
			Destination: &ipvs.Destination{
				Address:             net.IP(d.Addr.Addr().AsSlice()),
				Port:                d.Addr.Port(),
				Weight:              int(d.Weight),
				ConnectionFlags:     d.Fwd,
				AddressFamily:       family(d.Addr.Addr()),
				ActiveConnections:   int(d.ActiveConns),
				InactiveConnections: int(d.InactiveConns),
			},
			Encap: encapOf(d.Tunnel),
		})
	}
	return out, nil
}

// tunnelService addresses s for ipvstun.
func tunnelService(s *ipvs.Service) (ipvstun.Service, error) {
	a, ok := netip.AddrFromSlice(s.Address)
	if !ok || s.FWMark != 0 {
		return ipvstun.Service{}, fmt.Errorf("IPVS service %v:%d is not addressed by VIP and port", s.Address, s.Port)
	}
	return ipvstun.Service{Protocol: s.Protocol, Addr: netip.AddrPortFrom(a.Unmap(), s.Port)}, nil
}

// tunnelRequest converts a moby/ipvs write of d in s reached through the
// GUE encap to ipvstun's. GUE is sent without a UDP checksum (flags 0),
// as ipvsadm's --tun-nocsum: the inner packet carries its own.
func tunnelRequest(s *ipvs.Service, d *ipvs.Destination, encap model.Encap) (ipvstun.Service, ipvstun.Dest, error) {
	svc, err := tunnelService(s)
	if err != nil {
		return ipvstun.Service{}, ipvstun.Dest{}, err
	}
	a, ok := netip.AddrFromSlice(d.Address)
	if !ok {
		return ipvstun.Service{}, ipvstun.Dest{}, fmt.Errorf("real server address %v is not an IP address", d.Address)
	}
	return svc, ipvstun.Dest{
		Addr:   netip.AddrPortFrom(a.Unmap(), d.Port),
		Fwd:    d.ConnectionFlags & ipvs.ConnFwdMask,
		Weight: uint32(d.Weight),
		Tunnel: ipvstun.Tunnel{Type: ipvstun.GUE, Port: encap.Port},
	}, nil
}

// encapOf is the model's reading of a real server's tunnel. A type the
// director never programs (GRE) reads as a type of its own, so it differs
// from every desired encapsulation and is rewritten.
func encapOf(t ipvstun.Tunnel) model.Encap {
	switch t.Type {
	case ipvstun.IPIP:
		return model.Encap{}
	case ipvstun.GUE:
		return model.GUE(t.Port)
	default:
		return model.Encap{Type: model.EncapType(fmt.Sprintf("tun-type-%d", t.Type)), Port: t.Port}
	}
}
