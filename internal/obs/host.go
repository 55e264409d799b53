package obs

import (
	"fmt"
	"net"
	"net/netip"
)

// OnHost returns addr (host:port, a metricsAddress) with its host replaced
// by host, keeping the port: a DaemonSet on the host network passes the
// node's IP (the downward API's status.hostIP) so that its obs listener
// answers on the node's address instead of the file's loopback. An empty
// host leaves addr as it is, and so does an empty addr (no listener).
func OnHost(addr, host string) (string, error) {
	if host == "" || addr == "" {
		return addr, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return "", fmt.Errorf("metrics host %q is not an IP address", host)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("metrics address %q: %w", addr, err)
	}
	return net.JoinHostPort(ip.String(), port), nil
}
