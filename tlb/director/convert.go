package director

import (
	"net"
	"net/netip"
	"syscall"

	"github.com/moby/ipvs"
	"github.com/tlbproject/tlb/tlb/model"
)

// svcFlagHashed is IP_VS_SVC_F_HASHED: the kernel sets it on every service
// in its table and reports it back; it is not ours to compare.
const svcFlagHashed uint32 = 0x0002

var protoNumbers = map[model.Protocol]uint16{
	model.TCP:  syscall.IPPROTO_TCP,
	model.UDP:  syscall.IPPROTO_UDP,
	model.SCTP: syscall.IPPROTO_SCTP,
}

// ProtocolName returns the model protocol for an IP protocol number, or ""
// when the director never programs that protocol.
func ProtocolName(n uint16) model.Protocol {
	for name, num := range protoNumbers {
		if num == n {
			return name
		}
	}
	return ""
}

func family(a netip.Addr) uint16 {
	if a.Is4() {
		return syscall.AF_INET
	}
	return syscall.AF_INET6
}

// kernelService returns the IPVS service for s (defaults applied).
func kernelService(s model.Service) *ipvs.Service {
	mask := uint32(0xffffffff)
	if s.VIP.Is6() {
		mask = 128
	}
	return &ipvs.Service{
		Address:       net.IP(s.VIP.AsSlice()),
		Protocol:      protoNumbers[s.Protocol],
		Port:          s.Port,
		SchedName:     string(s.Scheduler),
		Flags:         model.FlagBits(s.Flags),
		Netmask:       mask,
		AddressFamily: family(s.VIP),
	}
}

// keyService returns an IPVS service carrying only the identity of k, as
// needed to address its destinations or delete it.
func keyService(k model.Key) *ipvs.Service {
	return &ipvs.Service{
		Address:       net.IP(k.VIP.AsSlice()),
		Protocol:      protoNumbers[k.Protocol],
		Port:          k.Port,
		AddressFamily: family(k.VIP),
	}
}

// kernelDestination returns the IPVS destination for a real server of a
// service on port: IPIP tunnel forwarding, port equal to the service port.
func kernelDestination(rs model.RealServer, port uint16) *ipvs.Destination {
	return &ipvs.Destination{
		Address:         net.IP(rs.Addr.AsSlice()),
		Port:            port,
		Weight:          rs.Weight,
		ConnectionFlags: ipvs.ConnFwdTunnel,
		AddressFamily:   family(rs.Addr),
	}
}

// serviceKey returns the model key of a kernel service, and false for
// services the director never creates (firewall-mark services, unknown
// protocols, unparsable addresses).
func serviceKey(s *ipvs.Service) (model.Key, bool) {
	if s.FWMark != 0 {
		return model.Key{}, false
	}
	proto := ProtocolName(s.Protocol)
	addr, ok := netip.AddrFromSlice(s.Address)
	if proto == "" || !ok {
		return model.Key{}, false
	}
	return model.Key{VIP: addr.Unmap(), Protocol: proto, Port: s.Port}, true
}
