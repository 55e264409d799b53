//go:build lab

package l4

import (
	"bufio"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/moby/ipvs"
)

// keptConn is one TCP connection to the VIP carrying several HTTP/1.1
// requests, so it is the same flow throughout.
type keptConn struct {
	c net.Conn
	r *bufio.Reader
}

func (k *keptConn) get(t *testing.T) (string, error) {
	t.Helper()
	_ = k.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := k.c.Write([]byte("GET / HTTP/1.1\r\nHost: vip\r\n\r\n")); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b := make([]byte, 64)
	n, _ := resp.Body.Read(b)
	return strings.TrimSpace(string(b[:n])), nil
}

// TestDrainSendsNoNewFlowsAndKeepsExistingOnes is the second half of
// proof 4: a gateway drained to weight 0 gets no new flows, while a
// connection already established to it keeps working.
func TestDrainSendsNoNewFlowsAndKeepsExistingOnes(t *testing.T) {
	l, d, h := upDSR(t, 2)
	drained := l.gateways[0]

	// Open connections until one lands on the gateway to be drained.
	var kept *keptConn
	for i := 0; i < 30 && kept == nil; i++ {
		c, err := l.client.Dial("tcp", net.JoinHostPort(vip.String(), "80"))
		if err != nil {
			t.Fatal(err)
		}
		k := &keptConn{c: c, r: bufio.NewReader(c)}
		name, err := k.get(t)
		if err != nil {
			t.Fatal(err)
		}
		if name == drained.Name {
			kept = k
			t.Cleanup(func() { _ = c.Close() })
		} else {
			_ = c.Close()
		}
	}
	if kept == nil {
		t.Fatalf("no connection reached %s in 30 tries", drained.Name)
	}

	reconcile(t, d, webService(l.gwAddrs, map[netip.Addr]int{l.gwAddrs[0]: 0}))
	for _, rs := range destWeights(t, h) {
		t.Logf("after drain: real server %s weight %d", rs.addr, rs.weight)
		if rs.addr == l.gwAddrs[0].String() && rs.weight != 0 {
			t.Fatalf("drained real server %s has weight %d in the kernel, want 0", rs.addr, rs.weight)
		}
	}

	counts := map[string]int{}
	for range 30 {
		counts[l.get(t, "/")]++
	}
	t.Logf("new flows after draining %s: %v", drained.Name, counts)
	if counts[drained.Name] != 0 {
		t.Errorf("drained gateway %s got %d of 30 new flows", drained.Name, counts[drained.Name])
	}
	if counts[l.gateways[1].Name] != 30 {
		t.Errorf("gateway %s got %d of 30 new flows, want all", l.gateways[1].Name, counts[l.gateways[1].Name])
	}

	for i := range 3 {
		name, err := kept.get(t)
		if err != nil {
			t.Fatalf("request %d on the connection established before the drain: %v", i, err)
		}
		if name != drained.Name {
			t.Fatalf("existing connection answered by %s, want %s", name, drained.Name)
		}
	}
	t.Logf("the connection established before the drain still answers from %s", drained.Name)
}

type destWeight struct {
	addr   string
	weight int
}

func destWeights(t *testing.T, h *ipvs.Handle) []destWeight {
	t.Helper()
	svcs, err := h.GetServices()
	if err != nil {
		t.Fatal(err)
	}
	var out []destWeight
	for _, s := range svcs {
		if !s.Address.Equal(vip.AsSlice()) {
			continue
		}
		ds, err := h.GetDestinations(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			out = append(out, destWeight{addr: d.Address.String(), weight: d.Weight})
		}
	}
	return out
}
