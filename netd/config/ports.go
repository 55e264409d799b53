package config

import (
	"fmt"
	"net/netip"

	"github.com/tlbproject/tlb/netd/model"
)

// validatePorts checks the port map against the VIPs (vips maps each VIP
// to its index in the file) and returns it as model data. Errors name the
// entry and field: "ports[1].targetPort: 0 is outside 1..65535".
func validatePorts(in []Port, vips map[netip.Addr]int) ([]model.PortMap, error) {
	type key struct {
		vip   netip.Addr
		proto string
		port  uint16
	}
	out := make([]model.PortMap, 0, len(in))
	seen := make(map[key]int, len(in))
	for i, p := range in {
		field := fmt.Sprintf("ports[%d]", i)
		a, err := netip.ParseAddr(p.VIP)
		if err != nil {
			return nil, fmt.Errorf("%s.vip: %q is not an IP address", field, p.VIP)
		}
		if _, ok := vips[a]; !ok {
			return nil, fmt.Errorf("%s.vip: %s is not one of vips", field, a)
		}
		if !a.Is4() {
			return nil, fmt.Errorf("%s.vip: %s is IPv6; the port map redirects IPv4 VIPs only", field, a)
		}
		proto := p.Protocol
		if proto == "" {
			proto = model.ProtocolTCP
		}
		if proto != model.ProtocolTCP {
			return nil, fmt.Errorf("%s.protocol: %q is not supported (only %q)", field, p.Protocol, model.ProtocolTCP)
		}
		if err := checkPortPair(field, p.Port, p.TargetPort); err != nil {
			return nil, err
		}
		k := key{a, proto, uint16(p.Port)}
		if j, dup := seen[k]; dup {
			return nil, fmt.Errorf("%s.port: %s %s repeats ports[%d]", field, proto, netip.AddrPortFrom(a, k.port), j)
		}
		seen[k] = i
		out = append(out, model.PortMap{VIP: a, Protocol: proto, Port: k.port, TargetPort: uint16(p.TargetPort)})
	}
	return out, nil
}

// validateListenerPorts checks netd.listenerPorts and returns it as a map
// from external port to listener port.
func validateListenerPorts(in []ListenerPort) (map[uint16]uint16, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[uint16]uint16, len(in))
	seen := make(map[int]int, len(in))
	for i, p := range in {
		field := fmt.Sprintf("netd.listenerPorts[%d]", i)
		if err := checkPortPair(field, p.Port, p.TargetPort); err != nil {
			return nil, err
		}
		if j, dup := seen[p.Port]; dup {
			return nil, fmt.Errorf("%s.port: %d repeats netd.listenerPorts[%d]", field, p.Port, j)
		}
		seen[p.Port] = i
		out[uint16(p.Port)] = uint16(p.TargetPort)
	}
	return out, nil
}

// checkPortPair checks one mapping's port and targetPort (entry field).
func checkPortPair(field string, port, target int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("%s.port: %d is outside 1..65535", field, port)
	}
	if target < 1 || target > 65535 {
		return fmt.Errorf("%s.targetPort: %d is outside 1..65535", field, target)
	}
	if target == port {
		return fmt.Errorf("%s.targetPort: %d equals port; a mapping to itself changes nothing, leave it out", field, target)
	}
	return nil
}
