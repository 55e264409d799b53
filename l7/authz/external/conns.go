package external

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc"
)

// Dialer opens a client connection to a gRPC interceptor at target
// (host:port). grpc.NewClient with the wanted credentials is one.
type Dialer interface {
	Dial(target string) (grpc.ClientConnInterface, error)
}

// Conns keeps one connection per interceptor address, opened on first use
// and shared by every route naming that address. Addresses come from
// configuration, so the set is bounded.
type Conns struct {
	dial Dialer
	mu   sync.Mutex
	m    map[string]grpc.ClientConnInterface
}

// NewConns returns an empty connection set that opens connections with d.
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

// Get returns the connection to target, opening it if needed.
func (c *Conns) Get(target string) (grpc.ClientConnInterface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc, ok := c.m[target]; ok {
		return cc, nil
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
