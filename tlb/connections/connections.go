// Package connections counts the connections kernel IPVS holds to each
// real server of the director's own virtual services, so that a draining
// gateway is removed only once its established flows have ended.
//
// It only reads IPVS, through a small interface (*ipvs.Handle implements
// it), and never writes; services the director does not own are not
// counted. It keeps no package-level state.
package connections

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	"github.com/moby/ipvs"

	"github.com/tlbproject/tlb/tlb/director"
	"github.com/tlbproject/tlb/tlb/model"
)

// Counter counts active connections per real server. Build it with New;
// it is safe for concurrent use.
type Counter struct {
	mu    sync.Mutex // serialises reads on the one netlink socket
	ipvs  director.IPVSStats
	owner director.Owner
}

// New returns a Counter reading h (give it a handle of its own: one
// *ipvs.Handle must not serve two goroutines) for the services owner
// owns.
func New(h director.IPVSStats, owner director.Owner) *Counter {
	return &Counter{ipvs: h, owner: owner}
}

// Active returns, per real server address, the sum over the owned
// services of the connections IPVS counts as active (established) to it.
// A real server IPVS does not hold is absent.
func (c *Counter) Active(ctx context.Context) (map[netip.Addr]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	owned := map[model.Key]bool{}
	for _, k := range c.owner.Owned() {
		owned[k] = true
	}
	svcs, err := c.ipvs.GetServices()
	if err != nil {
		return nil, fmt.Errorf("count connections: list IPVS services: %w", err)
	}
	out := map[netip.Addr]int{}
	for _, s := range svcs {
		k, ok := key(s)
		if !ok || !owned[k] {
			continue
		}
		dests, err := c.ipvs.GetDestinations(s)
		if err != nil {
			return nil, fmt.Errorf("count connections: list the real servers of %s: %w", k, err)
		}
		for _, d := range dests {
			if a, ok := netip.AddrFromSlice(d.Address); ok {
				out[a.Unmap()] += d.ActiveConnections
			}
		}
	}
	return out, nil
}

// key is the model key of an IPVS service; false for a firewall-mark
// service or an unknown protocol.
func key(s *ipvs.Service) (model.Key, bool) {
	proto := director.ProtocolName(s.Protocol)
	addr, ok := netip.AddrFromSlice(s.Address)
	if s.FWMark != 0 || proto == "" || !ok {
		return model.Key{}, false
	}
	return model.Key{VIP: addr.Unmap(), Protocol: proto, Port: s.Port}, true
}
