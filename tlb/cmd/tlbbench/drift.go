package main

import (
	"context"
	"fmt"
	"net"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

// driftRepair deletes the first real server (canonical order) of the last
// service of desired behind the director's back, as `ipvsadm -d` would,
// and checks on the real kernel that a full listing restores it. It
// reports what the resync before it (on remembered real-server lists)
// did.
func driftRepair(ctx context.Context, r *report, d *director.Director, h *ipvs.Handle, desired model.Desired) error {
	sorted := desired.Sorted()
	s := sorted.Services[len(sorted.Services)-1]
	rs := s.RealServers[0]
	svcs, err := h.GetServices()
	if err != nil {
		return err
	}
	var ks *ipvs.Service
	for _, x := range svcs {
		if net.IP(s.VIP.AsSlice()).Equal(x.Address) && x.Port == s.Port {
			ks = x
		}
	}
	if ks == nil {
		return fmt.Errorf("service %s missing", s.Key())
	}
	dst := &ipvs.Destination{Address: net.IP(rs.Addr.AsSlice()), Port: s.Port, AddressFamily: ks.AddressFamily}
	if err := h.DelDestination(ks, dst); err != nil {
		return fmt.Errorf("delete real server %s of %s behind the director: %w", rs.Addr, s.Key(), err)
	}
	res, err := d.Reconcile(ctx, desired)
	if err != nil {
		return fmt.Errorf("resync after drift: %w", err)
	}
	r.info("resync after a real server was deleted behind the director: %v, full listing: %v, %d netlink writes", res.Duration, res.FullListing, res.Writes)
	res, err = d.ReconcileFull(ctx, desired)
	if err != nil {
		return fmt.Errorf("full listing after drift: %w", err)
	}
	r.info("full listing after the drift: %v, %d netlink writes", res.Duration, res.Writes)
	if err := checkWeight(h, s, 0); err != nil {
		return fmt.Errorf("drift not repaired by the full listing: %w", err)
	}
	return nil
}
