package gatewayconformance

import (
	"fmt"
	"net"
	"strings"

	"github.com/miekg/dns"
)

// dnsImage is the image of the suite's UDP backend (its base manifests'
// coredns Deployment, which UDPRoute tests send DNS queries to).
const dnsImage = "coredns/coredns"

// DNSStandInEnv, set to a UDP address, makes the conformance test binary
// serve DNS there (ServeDNSStandIn) instead of running tests: the
// process PodProcesses starts for a coredns container.
const DNSStandInEnv = "TLB_CONFORMANCE_DNS_STANDIN"

// ServeDNSStandIn answers DNS over UDP on addr as the suite's Corefile
// would on a machine without internet access: queries under
// foo.bar.com get CoreDNS's whoami answer (the client's address in an
// A or AAAA record and its port in an SRV record, in the additional
// section); every other name is forwarded to resolvers out of reach, so
// it gets SERVFAIL. It returns only when the server fails.
func ServeDNSStandIn(addr string) error {
	srv := &dns.Server{Addr: addr, Net: "udp", Handler: dns.HandlerFunc(whoami)}
	if err := srv.ListenAndServe(); err != nil {
		return fmt.Errorf("dns stand-in on %s: %w", addr, err)
	}
	return nil
}

// whoami answers one query (see ServeDNSStandIn).
func whoami(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(q)
	name := ""
	if len(q.Question) > 0 {
		name = strings.ToLower(q.Question[0].Name)
	}
	if name != "foo.bar.com." && !strings.HasSuffix(name, ".foo.bar.com.") {
		m.Rcode = dns.RcodeServerFailure
		_ = w.WriteMsg(m)
		return
	}
	ua, _ := w.RemoteAddr().(*net.UDPAddr)
	if ua != nil {
		hdr := dns.RR_Header{Name: name, Class: dns.ClassINET, Ttl: 0}
		if ip4 := ua.IP.To4(); ip4 != nil {
			hdr.Rrtype = dns.TypeA
			m.Extra = append(m.Extra, &dns.A{Hdr: hdr, A: ip4})
		} else {
			hdr.Rrtype = dns.TypeAAAA
			m.Extra = append(m.Extra, &dns.AAAA{Hdr: hdr, AAAA: ua.IP})
		}
		m.Extra = append(m.Extra, &dns.SRV{Hdr: dns.RR_Header{Name: "_udp." + name, Rrtype: dns.TypeSRV, Class: dns.ClassINET},
			Port: uint16(ua.Port), Target: "."})
	}
	_ = w.WriteMsg(m)
}
