// Package apiproxy puts a loopback TCP proxy in front of the API server
// for tests that cut a component off it: while cut, the proxy accepts
// connections and closes them at once (counting them) and has closed every
// connection that was open, so to its clients the API server is
// unreachable. It owns only its listener and the connections through it.
package apiproxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a loopback TCP proxy to one target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	// refused counts connections closed while cut: proof that the clients
	// tried to reach the API server during the outage.
	refused atomic.Int64
}

// Start listens on a free loopback port and forwards to target
// (host:port) until the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.SetCut(true)
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Refused counts the connections closed while cut.
func (p *Proxy) Refused() int64 { return p.refused.Load() }

// SetCut cuts (true) or restores (false) the path to the target.
func (p *Proxy) SetCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
		clear(p.conns)
	}
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			p.refused.Add(1)
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go pipe(c, up)
		go pipe(up, c)
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}
