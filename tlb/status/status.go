// Package status reads the IPVS state of a director back from the kernel
// and renders it for people (a table) and programs (JSON): VIPs, real
// servers, weights, forwarding method and connection counts.
//
// It only reads; it never writes to the kernel. It shows every IPVS
// service, marking those the director did not record as its own.
package status

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

// Lister reads IPVS services and their real servers.
type Lister interface {
	GetServices() ([]*ipvs.Service, error)
	GetDestinations(*ipvs.Service) ([]*ipvs.Destination, error)
}

// Service is one IPVS virtual service as the kernel holds it (the JSON
// of `tlb status --json`, declared in package api).
type Service = api.IPVSService

// RealServer is one IPVS destination, in the kernel's list order.
type RealServer = api.IPVSRealServer

var forwarding = map[uint32]string{
	ipvs.ConnFwdMasq:        "masq",
	ipvs.ConnFwdLocalNode:   "local",
	ipvs.ConnFwdTunnel:      "tunnel",
	ipvs.ConnFwdDirectRoute: "route",
	ipvs.ConnFwdBypass:      "bypass",
}

// Read lists every IPVS service and its real servers. owned reports
// whether the director recorded a service as its own (nil: none).
func Read(h Lister, owned func(model.Key) bool) ([]Service, error) {
	svcs, err := h.GetServices()
	if err != nil {
		return nil, fmt.Errorf("list IPVS services: %w", err)
	}
	out := make([]Service, 0, len(svcs))
	for _, s := range svcs {
		addr, _ := netip.AddrFromSlice(s.Address)
		proto := string(director.ProtocolName(s.Protocol))
		if proto == "" {
			proto = fmt.Sprintf("proto-%d", s.Protocol)
		}
		sv := Service{
			VIP: addr.Unmap().String(), Protocol: proto, Port: s.Port, FWMark: s.FWMark,
			Scheduler: s.SchedName, Flags: flagNames(s), Connections: s.Stats.Connections,
			RealServers: []RealServer{},
		}
		if owned != nil && s.FWMark == 0 && addr.IsValid() {
			sv.Owned = owned(model.Key{VIP: addr.Unmap(), Protocol: model.Protocol(proto), Port: s.Port})
		}
		dests, err := h.GetDestinations(s)
		if err != nil {
			return nil, fmt.Errorf("list real servers of IPVS service %s:%d: %w", sv.VIP, s.Port, err)
		}
		for _, d := range dests {
			a, _ := netip.AddrFromSlice(d.Address)
			fwd, ok := forwarding[d.ConnectionFlags&ipvs.ConnFwdMask]
			if !ok {
				fwd = fmt.Sprintf("fwd-%d", d.ConnectionFlags&ipvs.ConnFwdMask)
			}
			sv.RealServers = append(sv.RealServers, RealServer{
				Address: a.Unmap().String(), Port: d.Port, Weight: d.Weight, Forwarding: fwd,
				ActiveConnections: d.ActiveConnections, InactiveConns: d.InactiveConnections,
			})
		}
		sv.CanonicalOrder = slices.IsSortedFunc(sv.RealServers, func(a, b RealServer) int {
			aa, _ := netip.ParseAddr(a.Address)
			ba, _ := netip.ParseAddr(b.Address)
			return aa.Compare(ba)
		})
		out = append(out, sv)
	}
	slices.SortFunc(out, func(a, b Service) int {
		aa, _ := netip.ParseAddr(a.VIP)
		ba, _ := netip.ParseAddr(b.VIP)
		return cmp.Or(aa.Compare(ba), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.FWMark, b.FWMark))
	})
	return out, nil
}

func flagNames(s *ipvs.Service) []string {
	out := []string{}
	for _, f := range model.FlagNames(model.Scheduler(s.SchedName), s.Flags) {
		out = append(out, string(f))
	}
	return out
}
