package gatewaylab

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// Flows records the client ends (ip:port) of the connections an HTTP
// client opens: the flows its requests are, as a director's IPVS
// connection table names them, so a test can tell its own downloads
// from the other entries there.
type Flows struct {
	mu    sync.Mutex
	addrs map[string]bool
}

// Track makes c (a Client) record the local address of every connection
// it opens in f.
func (f *Flows) Track(c *http.Client) {
	tr := c.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err == nil {
			f.mu.Lock()
			if f.addrs == nil {
				f.addrs = map[string]bool{}
			}
			f.addrs[conn.LocalAddr().String()] = true
			f.mu.Unlock()
		}
		return conn, err
	}
}

// Has reports whether addr (ip:port) is the client end of a tracked
// connection.
func (f *Flows) Has(addr string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addrs[addr]
}
