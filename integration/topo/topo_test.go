package topo

import (
	"io"
	"os"
	"strings"
	"testing"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("topo tests need root (network namespaces); CI runs as root")
	}
}

// TestTwoNodesRouteThroughRouter builds client -- router -- server and
// checks that a TCP connection crosses the router and that sysctls and
// addresses stay inside their own node.
func TestTwoNodesRouteThroughRouter(t *testing.T) {
	requireRoot(t)
	lab := New(t)
	client, router, server := lab.Node("client"), lab.Node("router"), lab.Node("server")
	cIf, _ := lab.Link(client, router, "198.18.1.2/24", "198.18.1.1/24")
	lab.Link(router, server, "198.18.2.1/24", "198.18.2.2/24")
	router.Sysctl(t, "net.ipv4.ip_forward", "1")
	client.AddRoute(t, "default", "198.18.1.1")
	server.AddRoute(t, "default", "198.18.2.1")

	if cIf != "router" {
		t.Errorf("client's interface = %q, want it named after its peer", cIf)
	}
	ln, err := server.Listen("tcp", "198.18.2.2:8080")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = io.WriteString(c, c.RemoteAddr().String())
		c.Close()
	}()
	c, err := client.Dial("tcp", "198.18.2.2:8080")
	if err != nil {
		t.Fatalf("dial through router: %v", err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if !strings.HasPrefix(string(b), "198.18.1.2:") {
		t.Errorf("server saw the client as %q, want 198.18.1.2:*", b)
	}

	// ip_forward was set in the router only.
	if got := strings.TrimSpace(client.Run(t, "cat", "/proc/sys/net/ipv4/ip_forward")); got != "0" {
		t.Errorf("client ip_forward = %s, want 0 (sysctl leaked out of the router)", got)
	}
	if got := strings.TrimSpace(router.Run(t, "cat", "/proc/sys/net/ipv4/ip_forward")); got != "1" {
		t.Errorf("router ip_forward = %s, want 1", got)
	}
	if out := server.Run(t, "ip", "-br", "addr"); strings.Contains(out, "198.18.1.2") {
		t.Errorf("server holds the client's address:\n%s", out)
	}
}
