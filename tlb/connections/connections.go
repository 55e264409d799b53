// Package connections counts the connections kernel IPVS holds to each
// real server of the director's own virtual services, so that a draining
// gateway is removed as soon as its flows have ended.
//
// It reads only the real servers of the services it is asked about (a
// targeted read per service, never a listing of every service: the
// director plans from memory), through a small interface (*ipvs.Handle
// implements it), and never writes; services the director does not own
// are not counted. It keeps no package-level state.
package connections

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"

	"github.com/moby/ipvs"

	"github.com/tlbproject/tlb/tlb/model"
)

// Destinations is the part of IPVS the Counter reads: the real servers
// of one service, with the kernel's connection counts. *ipvs.Handle
// implements it.
type Destinations interface {
	GetDestinations(*ipvs.Service) ([]*ipvs.Destination, error)
}

// Owner says which IPVS services are the director's.
// *director.Director implements it.
type Owner interface {
	Owned() []model.Key
}

// Counter counts connections per real server. Build it with New; it is
// safe for concurrent use.
type Counter struct {
	mu    sync.Mutex // serialises reads on the one netlink socket
	ipvs  Destinations
	owner Owner
}

// New returns a Counter reading h (give it a handle of its own: one
// *ipvs.Handle must not serve two goroutines) for the services owner
// owns.
func New(h Destinations, owner Owner) *Counter {
	return &Counter{ipvs: h, owner: owner}
}

// Count returns, per real server address, the sum over services of the
// connections IPVS holds to it: active (established) and inactive (the
// handshake not yet seen complete, or closing: FIN_WAIT, TIME_WAIT,
// CLOSE, until the kernel's timers expire them). A service the director
// does not own is skipped; a real server IPVS does not hold is absent.
func (c *Counter) Count(ctx context.Context, services []model.Key) (map[netip.Addr]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	owned := map[model.Key]bool{}
	for _, k := range c.owner.Owned() {
		owned[k] = true
	}
	out := map[netip.Addr]int{}
	for _, k := range services {
		svc, ok := service(k)
		if !owned[k] || !ok {
			continue
		}
		dests, err := c.ipvs.GetDestinations(svc)
		if err != nil {
			return nil, fmt.Errorf("count connections: list the real servers of %s: %w", k, err)
		}
		for _, d := range dests {
			if a, ok := netip.AddrFromSlice(d.Address); ok {
				out[a.Unmap()] += d.ActiveConnections + d.InactiveConnections
			}
		}
	}
	return out, nil
}

// service returns the IPVS service carrying only the identity of k, as
// its real servers are addressed; false for a protocol IPVS does not
// serve.
func service(k model.Key) (*ipvs.Service, bool) {
	protos := map[model.Protocol]uint16{model.TCP: syscall.IPPROTO_TCP, model.UDP: syscall.IPPROTO_UDP, model.SCTP: syscall.IPPROTO_SCTP}
	proto, ok := protos[k.Protocol]
	if !ok || !k.VIP.IsValid() {
		return nil, false
	}
	family := uint16(syscall.AF_INET)
	if k.VIP.Is6() {
		family = syscall.AF_INET6
	}
	return &ipvs.Service{Address: net.IP(k.VIP.AsSlice()), Protocol: proto, Port: k.Port, AddressFamily: family}, true
}
