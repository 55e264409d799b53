package model

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// DNSName is an upstream's endpoints named by DNS, as seed 000 writes
// them (todolist:8082): every gateway resolves Host itself, again and
// again, and sends to every address it answers on Port (an Envoy DNS
// cluster; see l7/translate/dns.go).
type DNSName struct {
	Host string
	Port uint16
}

// String formats the name as host:port.
func (n DNSName) String() string { return net.JoinHostPort(n.Host, strconv.Itoa(int(n.Port))) }

// ParseDNSName reads "host:port" with a DNS host name (lower case, no
// wildcard, not an IP address) and a port of 1..65535.
func ParseDNSName(s string) (DNSName, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return DNSName{}, fmt.Errorf("want host:port, got %q", s)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return DNSName{}, fmt.Errorf("want a port of 1..65535 in %q", s)
	}
	n := DNSName{Host: host, Port: uint16(p)}
	if err := n.check(); err != nil {
		return DNSName{}, err
	}
	return n, nil
}

// check says what is wrong with the name, or nil.
func (n DNSName) check() error {
	if _, err := netip.ParseAddr(n.Host); err == nil {
		return fmt.Errorf("%q is an IP address, not a DNS name", n.Host)
	}
	if n.Host == "" || strings.Contains(n.Host, "*") || checkHost(n.Host) != nil {
		return fmt.Errorf("%q is not a DNS name (lower-case letters, digits, '-' and '.', no wildcard)", n.Host)
	}
	if n.Port == 0 {
		return fmt.Errorf("want a port of 1..65535 for %q", n.Host)
	}
	return nil
}

// checkUpstreamDNS reports an upstream that names its endpoints both ways
// or by a bad name.
func checkUpstreamDNS(u Upstream, f string, bad func(field, format string, a ...any)) {
	if u.DNS == nil {
		return
	}
	if len(u.Endpoints) > 0 {
		bad(f+".endpoints", "an upstream has IP endpoints or one DNS name (host:port), not both")
	}
	if err := u.DNS.check(); err != nil {
		bad(f+".endpoints", "%v", err)
	}
}

// ParseDNSResolvers reads a comma-separated list of DNS servers, each
// IP:PORT or an IP alone (port 53), as the gateways are to ask them.
func ParseDNSResolvers(s string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if a, err := netip.ParseAddr(item); err == nil {
			out = append(out, netip.AddrPortFrom(a, 53))
			continue
		}
		ap, err := netip.ParseAddrPort(item)
		if err != nil || ap.Port() == 0 {
			return nil, fmt.Errorf("want IP or IP:PORT of a DNS server, got %q", item)
		}
		out = append(out, ap)
	}
	return out, nil
}

// AddressUpstream returns the upstream that a route target written as an
// address stands for (seed 000's "target: todolist:8082"): named
// host-port ("todolist-8082"), with the DNS name, or the IP address as
// its one endpoint.
func AddressUpstream(target string) (Upstream, error) {
	var u Upstream
	var host string
	var port uint16
	if ap, err := netip.ParseAddrPort(target); err == nil {
		u.Endpoints = []Endpoint{{Addr: ap, Weight: 1}}
		host, port = ap.Addr().String(), ap.Port()
	} else {
		n, err := ParseDNSName(target)
		if err != nil {
			return Upstream{}, err
		}
		u.DNS = &n
		host, port = n.Host, n.Port
	}
	u.Name = strings.Trim(strings.ReplaceAll(host, ":", "-"), "-") + "-" + strconv.Itoa(int(port))
	if err := checkName(u.Name); err != nil {
		return Upstream{}, fmt.Errorf("%s makes no upstream name: %w; declare an upstream with this endpoint", target, err)
	}
	return u, nil
}
