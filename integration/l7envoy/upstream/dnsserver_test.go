package upstream

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is a tiny authoritative DNS server over UDP that the test
// controls: it answers A queries for the names it holds (TTL 1s), an
// empty answer for their other types, and NXDOMAIN for any other name.
// It counts the queries for each name.
type dnsServer struct {
	addr netip.AddrPort
	conn net.PacketConn

	mu      sync.Mutex
	records map[string][]netip.Addr // lower-case name without the final dot
	queries map[string]int
}

// startDNS serves on addr until the test ends.
func startDNS(t *testing.T, addr string) *dnsServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("DNS server on %s: %v", addr, err)
	}
	s := &dnsServer{addr: netip.MustParseAddrPort(conn.LocalAddr().String()), conn: conn,
		records: map[string][]netip.Addr{}, queries: map[string]int{}}
	go s.serve()
	t.Cleanup(func() { _ = conn.Close() })
	return s
}

// set makes name resolve to addrs (none: NXDOMAIN).
func (s *dnsServer) set(name string, addrs ...netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(addrs) == 0 {
		delete(s.records, name)
		return
	}
	s.records[name] = addrs
}

// asked returns how many queries named name so far.
func (s *dnsServer) asked(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[name]
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if out, ok := s.answer(buf[:n]); ok {
			_, _ = s.conn.WriteTo(out, from)
		}
	}
}

// answer builds the reply to one query; false for what is not a query.
func (s *dnsServer) answer(in []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(in)
	if err != nil || h.Response {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
	s.mu.Lock()
	s.queries[name]++
	addrs, known := s.records[name]
	addrs = append([]netip.Addr(nil), addrs...)
	s.mu.Unlock()

	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil, false
	}
	if q.Type == dnsmessage.TypeA {
		for _, a := range addrs {
			if !a.Is4() {
				continue
			}
			if b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}, dnsmessage.AResource{A: a.As4()}) != nil {
				return nil, false
			}
		}
	}
	out, err := b.Finish()
	return out, err == nil
}
