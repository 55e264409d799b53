package k8snode

import (
	"io"
	"net"
	"sync"
)

// relay accepts connections on ln (a listener inside a node) and copies
// each both ways to a new connection to upstream, made from the VM's root
// network namespace. TLS passes through untouched.
type relay struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
}

func startRelay(ln net.Listener, upstream string) *relay {
	r := &relay{ln: ln, upstream: upstream, conns: map[net.Conn]bool{}}
	r.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.track(c, true)
			r.wg.Go(func() {
				defer r.track(c, false)
				pipe(c, upstream)
			})
		}
	})
	return r
}

func (r *relay) track(c net.Conn, add bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if add {
		r.conns[c] = true
	} else {
		delete(r.conns, c)
	}
}

// close stops accepting and closes every relayed connection.
func (r *relay) close() {
	_ = r.ln.Close()
	r.mu.Lock()
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func pipe(c net.Conn, upstream string) {
	defer func() { _ = c.Close() }()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer func() { _ = u.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
	<-done
}
