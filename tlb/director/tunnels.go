package director

import (
	"errors"
	"fmt"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

// Tunnels is the part of an IPVS handle that programs and reads a real
// server's tunnel encapsulation, which *ipvs.Handle (moby/ipvs v1.1.0)
// cannot: *Kernel has it. With a handle without it the director programs
// IPIP only, refuses to program GUE and reads every real server as IPIP.
type Tunnels interface {
	// NewTunnelDestination adds d to s, reached through encap.
	NewTunnelDestination(s *ipvs.Service, d *ipvs.Destination, encap model.Encap) error
	// UpdateTunnelDestination changes d of s (weight, forwarding and
	// encap) in place.
	UpdateTunnelDestination(s *ipvs.Service, d *ipvs.Destination, encap model.Encap) error
	// GetTunnelDestinations lists s's real servers in list order, each
	// with its encapsulation (normalised: IPIP is the zero value).
	GetTunnelDestinations(s *ipvs.Service) ([]TunnelDestination, error)
}

// TunnelDestination is a real server as Tunnels lists it.
type TunnelDestination struct {
	*ipvs.Destination
	Encap model.Encap
}

// errNoTunnels is returned for a GUE write through a handle that cannot
// program tunnels.
var errNoTunnels = errors.New("this IPVS handle programs IPIP only (open the director's handle with director.OpenKernel)")

// tunnelsOf returns h's Tunnels, or for a handle without them one that
// writes IPIP through h's own calls, refuses GUE and lists every real
// server as IPIP.
func tunnelsOf(h IPVS) Tunnels {
	if t, ok := h.(Tunnels); ok {
		return t
	}
	return ipipOnly{h}
}

// ipipOnly is the Tunnels of a handle that has none.
type ipipOnly struct{ h IPVS }

func (o ipipOnly) NewTunnelDestination(s *ipvs.Service, d *ipvs.Destination, encap model.Encap) error {
	if encap.IsGUE() {
		return errNoTunnels
	}
	return o.h.NewDestination(s, d)
}

func (o ipipOnly) UpdateTunnelDestination(s *ipvs.Service, d *ipvs.Destination, encap model.Encap) error {
	if encap.IsGUE() {
		return errNoTunnels
	}
	return o.h.UpdateDestination(s, d)
}

func (o ipipOnly) GetTunnelDestinations(s *ipvs.Service) ([]TunnelDestination, error) {
	dests, err := o.h.GetDestinations(s)
	if err != nil {
		return nil, err
	}
	out := make([]TunnelDestination, 0, len(dests))
	for _, d := range dests {
		out = append(out, TunnelDestination{Destination: d})
	}
	return out, nil
}

// newDestination adds rs to the service k (addressed by svc) through h,
// reached through encap.
func newDestination(h IPVS, svc *ipvs.Service, k model.Key, rs model.RealServer, encap model.Encap) error {
	if err := tunnelsOf(h).NewTunnelDestination(svc, kernelDestination(rs, k.Port), encap); err != nil {
		return fmt.Errorf("add real server %s (%s) to IPVS service %s: %w", rs.Addr, encap, k, err)
	}
	return nil
}

// updateDestination changes rs of the service k in place, as
// newDestination adds it.
func updateDestination(h IPVS, svc *ipvs.Service, k model.Key, rs model.RealServer, encap model.Encap) error {
	if err := tunnelsOf(h).UpdateTunnelDestination(svc, kernelDestination(rs, k.Port), encap); err != nil {
		return fmt.Errorf("update real server %s (%s) of IPVS service %s: %w", rs.Addr, encap, k, err)
	}
	return nil
}

// listDestinations lists the real servers of s, in list order, with their
// tunnels.
func listDestinations(h IPVS, s *ipvs.Service) ([]actualDest, error) {
	dests, err := tunnelsOf(h).GetTunnelDestinations(s)
	if err != nil {
		return nil, err
	}
	out := make([]actualDest, 0, len(dests))
	for _, d := range dests {
		for _, a := range toActualDests([]*ipvs.Destination{d.Destination}) {
			a.Encap = d.Encap.Normal()
			out = append(out, a)
		}
	}
	return out, nil
}
