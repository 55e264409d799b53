package external

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"

	"google.golang.org/grpc"
)

// Dialer opens a client connection to a gRPC interceptor at target
// (host:port). grpc.NewClient with the wanted credentials is one.
type Dialer interface {
	Dial(target string) (grpc.ClientConnInterface, error)
}

// Conns keeps one connection per interceptor address, opened on first use
// and shared by every route naming that address. Addresses are the
// operator's declarations only, and Retain closes those no longer
// declared, so the set stays bounded.
type Conns struct {
	dial Dialer
	mu   sync.Mutex
	m    map[string]grpc.ClientConnInterface
	// keep are the targets Get may dial, set by Retain; nil before.
	keep map[string]bool
}

// NewConns returns an empty connection set that opens connections with d,
// to no target until Retain names some.
func NewConns(d Dialer) *Conns {
	return &Conns{dial: d, m: map[string]grpc.ClientConnInterface{}}
}

// Close closes every connection opened so far that can be closed (a
// *grpc.ClientConn can) and forgets them all.
func (c *Conns) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for target, cc := range c.m {
		if cl, ok := cc.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing connection to interceptor %s: %w", target, err))
			}
		}
	}
	clear(c.m)
	return errors.Join(errs...)
}

// Retain closes and forgets the connections to every target not in keep;
// from now on Get dials only targets in keep.
func (c *Conns) Retain(keep map[string]bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep = maps.Clone(keep)
	var errs []error
	for target, cc := range c.m {
		if keep[target] {
			continue
		}
		if cl, ok := cc.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing connection to interceptor %s: %w", target, err))
			}
		}
		delete(c.m, target)
	}
	return errors.Join(errs...)
}

// Len is the number of connections open.
func (c *Conns) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Get returns the connection to target, opening it if needed.
func (c *Conns) Get(target string) (grpc.ClientConnInterface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc, ok := c.m[target]; ok {
		return cc, nil
	}
	if !c.keep[target] {
		return nil, fmt.Errorf("dialing interceptor %s: not an endpoint the operator declared", target)
	}
	if c.dial == nil {
		return nil, fmt.Errorf("dialing interceptor %s: no gRPC dialer configured", target)
	}
	cc, err := c.dial.Dial(target)
	if err != nil {
		return nil, fmt.Errorf("dialing interceptor %s: %w", target, err)
	}
	c.m[target] = cc
	return cc, nil
}
