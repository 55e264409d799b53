//go:build lab

package e2e_test

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/tlbproject/tlb/integration/topo"
)

// reachAPIServer makes the API server, which listens on the VM's own
// loopback, reachable at the same address on the loopback of node n (a
// network namespace): a TCP relay whose listener lives in n and whose
// upstream connections are made in the VM's root namespace. TLS passes
// through untouched, so the kubeconfigs written for the root namespace
// work unchanged inside the node.
func reachAPIServer(t *testing.T, n *topo.Node, hostport string) {
	t.Helper()
	ln, err := n.Listen("tcp", hostport)
	if err != nil {
		t.Fatalf("relay for the API server in %s: %v", n.Name, err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { relay(c, hostport) })
		}
	})
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
