//go:build lab

package e2e_test

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/tlbproject/tlb/integration/topo"
)

// apiRelay makes the API server, which listens on the VM's own loopback,
// reachable at the same address on the loopback of one node (a network
// namespace): a TCP relay whose listener lives in the node and whose
// upstream connections are made in the VM's root namespace. TLS passes
// through untouched, so the kubeconfigs written for the root namespace
// work unchanged inside the node. Cut makes the API server unreachable
// from the node (connections reset, new ones refused) until Restore.
type apiRelay struct {
	t        *testing.T
	node     *topo.Node
	hostport string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func reachAPIServer(t *testing.T, n *topo.Node, hostport string) *apiRelay {
	t.Helper()
	r := &apiRelay{t: t, node: n, hostport: hostport, conns: map[net.Conn]bool{}}
	r.Restore()
	t.Cleanup(func() { r.Cut(); r.wg.Wait() })
	return r
}

// Restore listens again in the node.
func (r *apiRelay) Restore() {
	r.t.Helper()
	ln, err := r.node.Listen("tcp", r.hostport)
	if err != nil {
		r.t.Fatalf("relay for the API server in %s: %v", r.node.Name, err)
	}
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	r.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !r.track(c, true) {
				c.Close()
				return
			}
			r.wg.Go(func() { defer r.track(c, false); relay(c, r.hostport) })
		}
	})
}

// Cut closes the listener and every relayed connection.
func (r *apiRelay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for c := range r.conns {
		c.Close()
	}
	clear(r.conns)
}

// track adds or removes a client connection; adding fails once cut.
func (r *apiRelay) track(c net.Conn, add bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !add {
		delete(r.conns, c)
		return true
	}
	if r.ln == nil {
		return false
	}
	r.conns[c] = true
	return true
}

// relay copies both ways between c and a new connection to upstream until
// either side closes.
func relay(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
	<-done
}
